import type { ValueTransformer } from 'typeorm';

/** mysql2 returns BIGINT as a string; every size and counter we store fits in a double exactly. */
export const bigintNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null || value === undefined ? value : Number(value)),
};

/** JSON kept in a TEXT column, so SQLite and MySQL store it the same way. */
export const jsonText: ValueTransformer = {
  to: (value: unknown) => (value === undefined ? undefined : JSON.stringify(value ?? null)),
  from: (value: string | null) => (value === null || value === undefined ? null : JSON.parse(value)),
};

/** Dates kept as UTC; SQLite returns them without a zone, MySQL (timezone 'Z') as Date. */
export const utcDate: ValueTransformer = {
  to: (value: Date | null | undefined) => value,
  from: (value: string | Date | null) => {
    if (value === null || value === undefined || value instanceof Date) return value;
    return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  },
};
