import LatchkeyHTTP
import LatchkeyLoop

/// What a client connection needs only while it reads a request or relays bytes: the bytes
/// read and not yet consumed, and the request decoder's state. An idle kept-alive connection
/// holds none (`ServerConnection+Reader.swift`): the 152 bytes live in the few readers
/// that busy connections hold, not in every connection object.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class RequestReader {
    @exclusivity(unchecked) var input: InputBuffer
    @exclusivity(unchecked) var decoder: RequestDecoder

    init(buffers: BufferPool, limits: HTTPLimits) {
        input = InputBuffer(pool: buffers)
        decoder = RequestDecoder(limits: limits)
    }

    /// Nothing buffered and no request under way: a new connection's reader would be the
    /// same (a decoder awaiting a head keeps nothing of the bytes it consumed).
    var isIdle: Bool { input.isEmpty && decoder.isAwaitingHead }
}
