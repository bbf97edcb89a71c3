import { FrameDecoder, encodeFrame, sniffCallId } from './framing.js';

const text = (value: string) => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('length-prefixed framing', () => {
  it('writes an unsigned varint length before the body', () => {
    expect([...encodeFrame(text('hi'))]).toEqual([2, 104, 105]);
    const body = new Uint8Array(300);
    const frame = encodeFrame(body);
    expect([...frame.subarray(0, 2)]).toEqual([0xac, 0x02]);
    expect(frame.length).toBe(302);
  });

  it('reassembles frames split across chunks and several frames in one chunk', () => {
    const decoder = new FrameDecoder(1024);
    const frames = [encodeFrame(text('{"a":1}')), encodeFrame(text('x'.repeat(200))), encodeFrame(text('last'))];
    const all = new Uint8Array(frames.reduce((sum, frame) => sum + frame.length, 0));
    let offset = 0;
    for (const frame of frames) {
      all.set(frame, offset);
      offset += frame.length;
    }
    const bodies: string[] = [];
    for (let index = 0; index < all.length; index += 3)
      for (const event of decoder.push(all.subarray(index, index + 3)))
        if (event.kind === 'frame') bodies.push(decode(event.body));
    expect(bodies).toEqual(['{"a":1}', 'x'.repeat(200), 'last']);
    expect(decoder.push(all).map((event) => event.kind)).toEqual(['frame', 'frame', 'frame']);
  });

  it('skips an oversized body without buffering it, reports its call_id and keeps decoding after it', () => {
    const decoder = new FrameDecoder(64);
    const big = encodeFrame(text(`{"type":"request","call_id":"c-\\"9\\"","args":["${'z'.repeat(500)}"]}`));
    const next = encodeFrame(text('{"after":true}'));
    const events = [...decoder.push(big.subarray(0, 40)), ...decoder.push(big.subarray(40)), ...decoder.push(next)];
    expect(events[0]).toEqual({ kind: 'oversized', length: big.length - 2, callId: 'c-"9"' });
    expect(events[1].kind).toBe('frame');
    expect(decode((events[1] as { body: Uint8Array }).body)).toBe('{"after":true}');
  });

  it('reports an oversized body without a call_id as null', () => {
    const decoder = new FrameDecoder(4);
    expect(decoder.push(encodeFrame(text('0123456789')))).toEqual([{ kind: 'oversized', length: 10, callId: null }]);
  });

  it('gives up on a length prefix longer than any real one', () => {
    const decoder = new FrameDecoder(1024);
    expect(decoder.push(new Uint8Array(12).fill(0xff))).toEqual([{ kind: 'corrupt', reason: 'invalid length prefix' }]);
    expect(decoder.push(encodeFrame(text('ignored')))).toEqual([]);
  });

  it('finds the call_id among the first bytes of a message', () => {
    expect(sniffCallId(text('{"type":"request", "call_id" : "abc-1",'))).toBe('abc-1');
    expect(sniffCallId(text('{"type":"request"'))).toBeNull();
  });
});
