import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { WASM_PAGE_BYTES, withMemoryMaximum } from './wasm-memory-maximum.js';

/** A module with one memory of `limits` pages, exporting it and `grow(pages)` (the `memory.grow` instruction). */
function moduleWithMemory(limits: number[]): Uint8Array {
  const memory = [0x01, ...limits];
  const exports = [0x02, 0x04, ...Buffer.from('grow'), 0x00, 0x00, 0x06, ...Buffer.from('memory'), 0x02, 0x00];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...[0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f], // type: (i32) -> i32
    ...[0x03, 0x02, 0x01, 0x00], // one function of that type
    ...[0x05, memory.length, ...memory],
    ...[0x07, exports.length, ...exports],
    ...[0x0a, 0x08, 0x01, 0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b], // local.get 0; memory.grow; end
  ]);
}

// WebAssembly's types are in the DOM library, which this project does not load.
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { Instance: new (module: unknown) => { exports: unknown }; Module: new (bytes: Uint8Array) => unknown };
};

function instantiate(bytes: Uint8Array) {
  const instance = new wasm.Instance(new wasm.Module(bytes));
  return instance.exports as {
    grow(pages: number): number;
    memory: { grow(pages: number): number; buffer: ArrayBuffer };
  };
}

describe('withMemoryMaximum', () => {
  it('caps growth by the memory.grow instruction at the new maximum', () => {
    const { grow } = instantiate(withMemoryMaximum(moduleWithMemory([0x01, 0x01, 0xe4, 0x00]), 3));
    expect(grow(2)).toBe(1); // from 1 page to 3: the old size
    expect(grow(1)).toBe(-1); // a fourth page is refused
  });

  it('caps growth from JavaScript at the new maximum', () => {
    const { memory } = instantiate(withMemoryMaximum(moduleWithMemory([0x01, 0x01, 0xe4, 0x00]), 2));
    memory.grow(1);
    expect(() => memory.grow(1)).toThrow(RangeError);
    expect(memory.buffer.byteLength).toBe(2 * WASM_PAGE_BYTES);
  });

  it('adds a maximum to a memory that declared none', () => {
    const { grow } = instantiate(withMemoryMaximum(moduleWithMemory([0x00, 0x01]), 2));
    expect([grow(1), grow(1)]).toEqual([1, -1]);
  });

  it("never sets the maximum below the module's initial size nor above its own maximum", () => {
    expect(instantiate(withMemoryMaximum(moduleWithMemory([0x01, 0x02, 0x04]), 1)).grow(1)).toBe(-1);
    expect(instantiate(withMemoryMaximum(moduleWithMemory([0x01, 0x02, 0x04]), 1)).memory.buffer.byteLength).toBe(
      2 * WASM_PAGE_BYTES,
    );
    const { grow } = instantiate(withMemoryMaximum(moduleWithMemory([0x01, 0x01, 0x02]), 100));
    expect([grow(1), grow(1)]).toEqual([1, -1]);
  });

  it('refuses a module without a memory of its own, a shared memory and a bad maximum', () => {
    const noMemory = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(() => withMemoryMaximum(noMemory, 2)).toThrow(/defines no memory/);
    expect(() => withMemoryMaximum(moduleWithMemory([0x03, 0x01, 0x02]), 2)).toThrow(/shared or 64-bit/);
    expect(() => withMemoryMaximum(moduleWithMemory([0x01, 0x01, 0x02]), 0)).toThrow(RangeError);
    expect(() => withMemoryMaximum(Uint8Array.from([1, 2, 3]), 2)).toThrow(/not a WebAssembly module/);
  });

  it('finds the memory of the pyodide build the sandbox runs and rewrites only its limits', () => {
    const directory = dirname(createRequire(import.meta.url).resolve('pyodide/package.json'));
    const original = readFileSync(join(directory, 'pyodide.asm.wasm'));
    const capped = withMemoryMaximum(original, 4096);
    // The pinned build declares 4 GiB (65536 pages, a 3-byte number); 4096 pages take 2 bytes.
    expect(capped.length).toBe(original.length - 1);
    expect(Buffer.from(capped.subarray(capped.length - 1000)).equals(original.subarray(original.length - 1000))).toBe(
      true,
    );
  });
});
