/** Money in micro-units (1 = 0.000001 of the currency): integers, so sums and atomic UPDATEs are exact. */
export const MICROS_PER_UNIT = 1_000_000;

export function toMicros(amount: number): number {
  return Math.round(amount * MICROS_PER_UNIT);
}

export function fromMicros(micros: number): number {
  return micros / MICROS_PER_UNIT;
}

export interface TokenPrice {
  /** Currency per 1,000 prompt tokens. */
  input_per_1k: number;
  /** Currency per 1,000 completion tokens. */
  output_per_1k: number;
}

/** The cost of a call in micro-units, rounded up (a fraction of a micro-unit is never given away). */
export function costMicros(price: TokenPrice, promptTokens: number, completionTokens: number): number {
  const micros =
    (promptTokens * price.input_per_1k + completionTokens * price.output_per_1k) * (MICROS_PER_UNIT / 1000);
  return Math.max(0, Math.ceil(micros - 1e-9));
}
