// The snapshot's delta against the WebAssembly module's own static data, written by
// make_snapshot.mjs (Node, at build time) and undone by worker-python.js: both import this module.
//
// About 3.8 MB of Python's memory is the module's static data: its active data segments, which
// the reader's browser already has in the .wasm. In the snapshot that range is written XORed
// with the data segments' bytes (mostly zeros then: a smaller download). The manifest's
// `snapshot_delta` says where: file offsets `from`, `to` (4-byte aligned) and `check`, a 32-bit
// FNV-1a of the original words there.

// The data segments of a WebAssembly binary (section 11, active segments with an i32.const
// offset) as one image of memory [lo, hi), 4-byte aligned.
export function dataImage(wasm) {
  let i = 8;
  const leb = () => {
    let r = 0, shift = 0, b;
    do { b = wasm[i++]; r += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return r;
  };
  const sleb = () => {
    let r = 0, shift = 0, b;
    do { b = wasm[i++]; r |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return shift < 32 && (b & 0x40) ? r | (-1 << shift) : r;
  };
  const segments = [];
  while (i < wasm.length) {
    const id = wasm[i++];
    const size = leb();
    const end = i + size;
    if (id === 11) {
      for (let n = leb(); n > 0; n--) {
        const flag = leb();
        let offset = null;
        if (flag === 0) {
          if (wasm[i++] !== 0x41) throw new Error("data segment offset is not an i32.const");
          offset = sleb();
          if (wasm[i++] !== 0x0b) throw new Error("data segment offset expression");
        } else if (flag !== 1) {
          throw new Error(`data segment flag ${flag}`);
        }
        const len = leb();
        if (offset !== null && len) segments.push([offset, i, len]);
        i += len;
      }
    }
    i = end;
  }
  if (!segments.length) throw new Error("no data segments");
  let lo = Math.min(...segments.map(([o]) => o));
  let hi = Math.max(...segments.map(([o, , n]) => o + n));
  lo -= lo % 4;
  hi += (4 - (hi % 4)) % 4;
  const image = new Uint8Array(hi - lo);
  for (const [o, at, n] of segments) image.set(wasm.subarray(at, at + n), o - lo);
  return { lo, hi, image };
}

// 32-bit FNV-1a over 32-bit words.
export function check(words) {
  let h = 0x811c9dc5;
  for (let k = 0; k < words.length; k++) h = Math.imul(h ^ words[k], 0x01000193);
  return h >>> 0;
}

// Where the heap starts in a snapshot (Pyodide's header: word 1).
const heapAt = (snapshot) => new Uint32Array(snapshot.buffer, snapshot.byteOffset, 2)[1];

// XOR the data range of `snapshot` (Uint8Array, byteOffset 4-aligned) with the data image, in
// place; encode returns the manifest's snapshot_delta.
function xor(snapshot, lo, hi, image) {
  const from = heapAt(snapshot) + lo;
  if (from % 4 || from + (hi - lo) > snapshot.length) throw new Error("snapshot: bad data range");
  const words = new Uint32Array(snapshot.buffer, snapshot.byteOffset + from, (hi - lo) / 4);
  const base = new Uint32Array(image.buffer, image.byteOffset, words.length);
  for (let k = 0; k < words.length; k++) words[k] ^= base[k];
  return { from, to: from + (hi - lo), words };
}

export function encode(snapshot, wasm) {
  const { lo, hi, image } = dataImage(wasm);
  const from = heapAt(snapshot) + lo;
  const sum = check(new Uint32Array(snapshot.buffer, snapshot.byteOffset + from, (hi - lo) / 4));
  const { to } = xor(snapshot, lo, hi, image);
  return { from, to, check: sum };
}

// Undo encode(); throws when the result is not what was encoded (another .wasm).
export function decode(snapshot, wasm, delta) {
  const { lo, hi, image } = dataImage(wasm);
  const { from, to, words } = xor(snapshot, lo, hi, image);
  if (from !== delta.from || to !== delta.to || check(words) !== delta.check) {
    throw new Error("snapshot: the delta does not match this runtime");
  }
}
