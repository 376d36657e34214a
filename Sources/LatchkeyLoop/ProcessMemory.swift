import CLinux

/// Process-wide allocator settings for the data plane. glibc hands freed memory at the top
/// of a heap back to the kernel once it passes the trim threshold, and serves blocks above
/// the mmap threshold with an mmap and munmap each. A proxy frees the same buffers after
/// every request and needs them again for the next: with glibc's defaults a 64 KiB upload
/// took 13 page faults, every one in the copy into the request body's queue, whose pages
/// had been given back since the previous request (measured with `perf record -e
/// page-faults`).
public enum ProcessMemory {
    /// Blocks smaller than this come from the heaps, however often they are freed: above
    /// every buffer a request holds (a body queue up to the high-water mark plus a read, a
    /// replay record, libcurl's upload and download buffers).
    static let mmapThreshold: Int32 = 1 << 20
    /// Free memory a heap keeps at its top: a few requests' worth of those buffers per loop.
    static let trimThreshold: Int32 = 8 << 20

    /// Call once at start, before the loops run.
    public static func keepFreedBuffers() {
        _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        _ = mallopt(M_TRIM_THRESHOLD, trimThreshold)
    }
}
