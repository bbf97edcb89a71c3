/**
 * Length-prefixed frames on the `/toolbox/rpc/1.0.0` stream: an unsigned varint (LEB128, as
 * it-length-prefixed and every libp2p implementation write it) with the body's byte length, then the
 * body (UTF-8 JSON). The decoder never buffers more than the maximum message size: an oversized body
 * is skipped as it arrives and reported with the `call_id` found in its first bytes, if any.
 */

/** Longest varint accepted: 9 bytes cover any length below 2^63; real lengths are far below. */
const MAX_VARINT_BYTES = 9;
/** How much of an oversized body is kept to find its `call_id`. */
const SNIFF_BYTES = 1024;

export function encodeFrame(body: Uint8Array): Uint8Array {
  const prefix: number[] = [];
  let length = body.length;
  while (length >= 0x80) {
    prefix.push((length & 0x7f) | 0x80);
    length = Math.floor(length / 128);
  }
  prefix.push(length);
  const frame = new Uint8Array(prefix.length + body.length);
  frame.set(prefix, 0);
  frame.set(body, prefix.length);
  return frame;
}

export type FrameEvent =
  | { kind: 'frame'; body: Uint8Array }
  /** A body longer than the limit, skipped; `callId` when its first bytes name one. */
  | { kind: 'oversized'; length: number; callId: string | null }
  /** The byte stream cannot be framed any further (a varint longer than any real length). */
  | { kind: 'corrupt'; reason: string };

/** The `call_id` string value among the first bytes of a JSON message, or null. */
export function sniffCallId(head: Uint8Array): string | null {
  const text = new TextDecoder().decode(head);
  const match = /"call_id"\s*:\s*"((?:[^"\\]|\\.){1,200})"/.exec(text);
  if (!match) return null;
  try {
    return JSON.parse(`"${match[1]}"`) as string;
  } catch {
    return null;
  }
}

export class FrameDecoder {
  private buffer: Uint8Array = new Uint8Array(0);
  private skipping: { remaining: number; length: number; head: Uint8Array } | undefined;
  private corrupt = false;

  constructor(private readonly maxBodyBytes: number) {}

  /** Feeds received bytes; returns the complete frames (and oversize reports) they finish. */
  push(chunk: Uint8Array): FrameEvent[] {
    if (this.corrupt) return [];
    const events: FrameEvent[] = [];
    let data = chunk;
    if (this.skipping) data = this.skip(data, events);
    if (data.length === 0) return events;
    this.buffer = this.buffer.length === 0 ? data : concat(this.buffer, data);
    for (;;) {
      const prefix = readVarint(this.buffer);
      if (prefix === 'incomplete') return events;
      if (prefix === 'corrupt') {
        this.corrupt = true;
        this.buffer = new Uint8Array(0);
        events.push({ kind: 'corrupt', reason: 'invalid length prefix' });
        return events;
      }
      const { value: length, bytes } = prefix;
      if (length > this.maxBodyBytes) {
        const rest = this.buffer.subarray(bytes);
        this.buffer = new Uint8Array(0);
        this.skipping = { remaining: length, length, head: new Uint8Array(0) };
        const left = this.skip(rest, events);
        if (left.length === 0) return events;
        this.buffer = left;
        continue;
      }
      if (this.buffer.length < bytes + length) return events;
      events.push({ kind: 'frame', body: this.buffer.slice(bytes, bytes + length) });
      this.buffer = this.buffer.subarray(bytes + length);
      if (this.buffer.length === 0) return events;
    }
  }

  /** Consumes up to the rest of an oversized body from `data`; returns what follows it. */
  private skip(data: Uint8Array, events: FrameEvent[]): Uint8Array {
    const skipping = this.skipping!;
    const taken = Math.min(skipping.remaining, data.length);
    if (skipping.head.length < SNIFF_BYTES)
      skipping.head = concat(skipping.head, data.subarray(0, Math.min(taken, SNIFF_BYTES - skipping.head.length)));
    skipping.remaining -= taken;
    if (skipping.remaining === 0) {
      this.skipping = undefined;
      events.push({ kind: 'oversized', length: skipping.length, callId: sniffCallId(skipping.head) });
    }
    return data.subarray(taken);
  }
}

function readVarint(buffer: Uint8Array): { value: number; bytes: number } | 'incomplete' | 'corrupt' {
  let value = 0;
  let scale = 1;
  for (let index = 0; index < buffer.length; index++) {
    if (index >= MAX_VARINT_BYTES) return 'corrupt';
    const byte = buffer[index];
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return Number.isSafeInteger(value) ? { value, bytes: index + 1 } : 'corrupt';
    scale *= 128;
  }
  return buffer.length >= MAX_VARINT_BYTES ? 'corrupt' : 'incomplete';
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first, 0);
  joined.set(second, first.length);
  return joined;
}
