/** Background generation of one delta (pre-generation on upload, large pairs, POST …/diff/create). */
export const GENERATE_DELTA_JOB = 'diff.generate';

/** Total tries, with the queue's exponential back-off between them. */
export const GENERATE_DELTA_ATTEMPTS = 5;

export interface GenerateDeltaPayload {
  packageId: string;
  fromVersionId: string;
  toVersionId: string;
  /** Rebuild even when a ready delta exists. */
  force: boolean;
}

/** One job id per pair: the queue ignores a second add while the first is waiting or running. */
export function generateDeltaJobId(payload: Pick<GenerateDeltaPayload, 'fromVersionId' | 'toVersionId'>): string {
  return `${payload.fromVersionId}:${payload.toVersionId}`;
}
