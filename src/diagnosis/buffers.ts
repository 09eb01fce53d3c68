/**
 * Typed arrays for pixels and tensors that the caller fills completely, allocated without zeroing.
 *
 * `new Uint8Array(n)` asks the allocator for zeroed memory (calloc). Under the image's jemalloc (deploy/Dockerfile)
 * a zeroed allocation of more than a few pages is zeroed by handing the pages back to the kernel (madvise) and
 * faulting them in again on first write: a system call, a TLB flush across the cores and a page fault per 4 KiB,
 * which on the virtual machines measured doubled the core's preprocessing (README, Performance: the allocator).
 * `Buffer.allocUnsafeSlow` takes plain malloc memory of its own (never Node's shared pool), so a view over it
 * starts at offset 0 and its buffer can be transferred to a worker.
 */
export function uninitialisedBytes(length: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.allocUnsafeSlow(length).buffer, 0, length);
}

/** As `uninitialisedBytes`, for float32 tensors. */
export function uninitialisedFloats(length: number): Float32Array<ArrayBuffer> {
  return new Float32Array(Buffer.allocUnsafeSlow(length * Float32Array.BYTES_PER_ELEMENT).buffer, 0, length);
}
