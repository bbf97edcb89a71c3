/** WebAssembly's page: the unit of a memory's limits. */
export const WASM_PAGE_BYTES = 65_536;

const MEMORY_SECTION = 5;
const LIMITS_MIN_ONLY = 0x00;
const LIMITS_MIN_MAX = 0x01;

/**
 * Returns a copy of a WebAssembly module whose own (defined, not imported) memory may grow to `maxPages` at
 * most. The engine enforces a memory's declared maximum on every `memory.grow`, from the module's code or
 * from JavaScript, so this is a hard cap on the linear memory where the interpreter keeps its objects: past
 * it `malloc` fails and Python raises MemoryError. V8's heap limits do not count WebAssembly memory.
 *
 * Throws when the module has no defined memory, several, or a shared or 64-bit one (not what Emscripten
 * builds for pyodide; a new build that changes that must be looked at before it is trusted).
 */
export function withMemoryMaximum(module: Uint8Array, maxPages: number): Uint8Array {
  if (!Number.isInteger(maxPages) || maxPages < 1 || maxPages > 65_536)
    throw new RangeError(`maxPages must be a whole number from 1 to 65536 (got ${maxPages})`);
  if (module.length < 8 || module[0] !== 0x00 || module[1] !== 0x61 || module[2] !== 0x73 || module[3] !== 0x6d)
    throw new Error('not a WebAssembly module');
  let offset = 8;
  while (offset < module.length) {
    const sectionStart = offset;
    const id = module[offset++];
    const size = readUnsigned(module, offset);
    offset = size.next;
    const contentStart = offset;
    const contentEnd = contentStart + size.value;
    if (contentEnd > module.length) throw new Error('truncated WebAssembly section');
    if (id === MEMORY_SECTION) {
      const count = readUnsigned(module, contentStart);
      if (count.value !== 1) throw new Error(`expected one defined memory, found ${count.value}`);
      const flags = module[count.next];
      if (flags !== LIMITS_MIN_ONLY && flags !== LIMITS_MIN_MAX)
        throw new Error(`unsupported memory limits flags 0x${flags.toString(16)} (shared or 64-bit memory)`);
      const initial = readUnsigned(module, count.next + 1);
      const declaredMax = flags === LIMITS_MIN_MAX ? readUnsigned(module, initial.next) : undefined;
      const limitsEnd = declaredMax ? declaredMax.next : initial.next;
      if (limitsEnd !== contentEnd) throw new Error('unexpected bytes after the memory limits');
      // Never below what the module starts with, and never above what it declared itself.
      const maximum = Math.min(Math.max(maxPages, initial.value), declaredMax?.value ?? 65_536);
      const content = Uint8Array.from([
        ...writeUnsigned(1),
        LIMITS_MIN_MAX,
        ...writeUnsigned(initial.value),
        ...writeUnsigned(maximum),
      ]);
      const header = Uint8Array.from([MEMORY_SECTION, ...writeUnsigned(content.length)]);
      const result = new Uint8Array(sectionStart + header.length + content.length + (module.length - contentEnd));
      result.set(module.subarray(0, sectionStart), 0);
      result.set(header, sectionStart);
      result.set(content, sectionStart + header.length);
      result.set(module.subarray(contentEnd), sectionStart + header.length + content.length);
      return result;
    }
    offset = contentEnd;
  }
  throw new Error('the module defines no memory of its own');
}

function readUnsigned(bytes: Uint8Array, start: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let offset = start;
  for (;;) {
    if (offset >= bytes.length || shift > 35) throw new Error('bad LEB128 number in the WebAssembly module');
    const byte = bytes[offset++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return { value, next: offset };
  }
}

function writeUnsigned(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    out.push(byte);
  } while (rest > 0);
  return out;
}
