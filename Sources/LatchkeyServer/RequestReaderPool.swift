import LatchkeyHTTP
import LatchkeyLoop

/// The readers one loop's connections take when bytes arrive and give back when they go
/// idle. A kept reader keeps its input buffer, so that a request costs one take and one give
/// here, as the buffer alone did when every connection held its decoder.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class RequestReaderPool {
    /// Where the readers' input buffers come from and go back to.
    let buffers: BufferPool
    private let maxKept: Int
    @exclusivity(unchecked) private var kept: [RequestReader] = []

    init(buffers: BufferPool, maxKept: Int) {
        self.buffers = buffers
        self.maxKept = maxKept
    }

    /// Readers kept now, for tests.
    var keptCount: Int { kept.count }

    /// An idle reader whose decoder applies `limits`.
    func take(limits: HTTPLimits) -> RequestReader {
        guard let reader = kept.popLast() else { return RequestReader(buffers: buffers, limits: limits) }
        // Limits a reload changed since the reader was last used.
        if reader.decoder.limits != limits { reader.decoder = RequestDecoder(limits: limits) }
        return reader
    }

    /// Takes back an idle reader (`RequestReader.isIdle`). It keeps a buffer of the pool's
    /// size; a grown one is freed. Beyond `maxKept` the reader goes, its buffer to `buffers`.
    func give(_ reader: RequestReader) {
        precondition(reader.isIdle, "a reader given back with bytes or a request under way")
        guard kept.count < maxKept else { return }
        if reader.input.capacity != buffers.bufferSize { reader.input.releaseIfEmpty() }
        kept.append(reader)
    }
}
