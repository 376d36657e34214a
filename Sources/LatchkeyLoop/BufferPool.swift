/// Fixed-size input buffers kept by one loop for its connections (`InputBuffer`): the
/// server's for its clients, the upstream client's for its raw connections. A connection
/// takes one when it has bytes to read and gives it back when it goes idle, so that idle
/// connections hold nothing while busy ones do not pay a 16 KiB malloc and free per
/// request. Loop-confined, like everything it serves.
///
/// Its calls are `@inlinable`, as `InputBuffer` says why.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class BufferPool {
    public let bufferSize: Int
    @usableFromInline let maxKept: Int
    @usableFromInline @exclusivity(unchecked) var kept: [UnsafeMutableRawPointer] = []

    public init(bufferSize: Int, maxKept: Int) {
        self.bufferSize = bufferSize
        self.maxKept = maxKept
    }

    deinit {
        for buffer in kept { buffer.deallocate() }
    }

    /// Buffers kept now, for tests.
    public var keptCount: Int { kept.count }

    @inlinable
    public func take() -> UnsafeMutableRawPointer {
        kept.popLast() ?? UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 16)
    }

    /// Takes back a buffer of `bufferSize` bytes; beyond `maxKept` it is freed.
    @inlinable
    public func give(_ buffer: UnsafeMutableRawPointer) {
        if kept.count < maxKept { kept.append(buffer) } else { buffer.deallocate() }
    }
}
