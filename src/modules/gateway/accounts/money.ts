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

/**
 * The most completion tokens (at most `limit`) a call with `promptTokens` may generate without costing more than
 * `availableMicros`; -1 when not even the prompt is covered.
 */
export function affordableCompletionTokens(
  price: TokenPrice,
  promptTokens: number,
  availableMicros: number,
  limit: number,
): number {
  if (costMicros(price, promptTokens, 0) > availableMicros) return -1;
  if (price.output_per_1k <= 0 || costMicros(price, promptTokens, limit) <= availableMicros) return limit;
  const perToken = price.output_per_1k * (MICROS_PER_UNIT / 1000);
  const left = availableMicros - promptTokens * price.input_per_1k * (MICROS_PER_UNIT / 1000);
  let tokens = Math.min(limit, Math.max(0, Math.floor(left / perToken)));
  // The estimate is corrected by the exact (rounded-up) cost, in either direction by at most a token or two.
  while (tokens > 0 && costMicros(price, promptTokens, tokens) > availableMicros) tokens -= 1;
  while (tokens < limit && costMicros(price, promptTokens, tokens + 1) <= availableMicros) tokens += 1;
  return tokens;
}

/**
 * The largest amount an admin may give (a top-up, a starting balance or a set balance) and the largest balance a
 * top-up may reach: one billion currency units. In micro-units that is 10^15, below 2^53, so every sum of balances
 * and charges stays an exact integer in JavaScript and in a signed 64-bit column.
 */
export const MAX_ADMIN_AMOUNT = 1_000_000_000;
export const MAX_BALANCE_MICROS = MAX_ADMIN_AMOUNT * MICROS_PER_UNIT;
