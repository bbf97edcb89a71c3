import type { Stream } from '@libp2p/interface';
import { encodeFrame } from './framing.js';

/** The plain bytes of a received chunk (libp2p hands out Uint8Array or Uint8ArrayList). */
export function chunkBytes(chunk: Uint8Array | { subarray(): Uint8Array }): Uint8Array {
  return chunk instanceof Uint8Array ? chunk : chunk.subarray();
}

/**
 * Writes frames to a stream in order, waiting for the stream to drain when its write buffer is full.
 * A write to a closed stream is dropped (its reader sees the close and fails what is pending).
 */
export class FrameWriter {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly stream: Stream) {}

  /** Queues one frame; `undefined` queues nothing and resolves once everything before it is written. */
  write(body: Uint8Array | undefined): Promise<void> {
    if (body === undefined) return this.tail;
    const frame = encodeFrame(body);
    this.tail = this.tail.then(async () => {
      if (this.stream.writeStatus !== 'writable') return;
      try {
        if (!this.stream.send(frame)) await this.stream.onDrain();
      } catch {
        // closed or reset under us
      }
    });
    return this.tail;
  }
}
