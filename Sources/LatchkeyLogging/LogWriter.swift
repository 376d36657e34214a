#if canImport(Glibc)
import Glibc
#endif
import CoreMetrics
import Foundation
import Synchronization

/// Writes finished log lines to a file descriptor from a thread of its own, so that an
/// output nobody reads (a stuck log shipper, `latchkey serve | less`) never stalls an event
/// loop. Lines wait in a bounded buffer; when it is full, a new line is dropped and
/// counted rather than waited for, as a syslog daemon drops messages rather than stalling
/// its senders. Once the output moves again, a line says how many were lost.
///
/// The writer takes everything buffered in one swap, so a busy proxy writes its access
/// log in large `write(2)`s instead of one per request.
public final class LogWriter: Sendable {
    /// About five thousand access-log lines.
    public static let defaultCapacity = 1 << 20

    private let fd: Int32
    private let capacity: Int
    private let dropNote: @Sendable (Int) -> [UInt8]
    private let state: Mutex<State>
    /// Signalled when a line arrives for a writer that found nothing to write.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the writer finds nothing to write while a `flush` waits.
    private let drained = DispatchSemaphore(value: 0)
    private let droppedTotal = Atomic<Int>(0)

    private struct State {
        var pending: [UInt8] = []
        /// Lines dropped since the writer last reported it.
        var unreported = 0
        /// The writer waits on `wake`: the next line must signal it.
        var writerIdle = false
        var flushWaiting = false
        var droppedLines: Counter?
    }

    /// `dropNote` formats the line that reports a number of dropped lines.
    public init(fd: Int32, capacity: Int = LogWriter.defaultCapacity, dropNote: @escaping @Sendable (Int) -> [UInt8]) {
        self.fd = fd
        self.capacity = capacity
        self.dropNote = dropNote
        var initial = State()
        initial.pending.reserveCapacity(capacity)
        state = Mutex(initial)
        let thread = Thread { [self] in run() }
        thread.name = "latchkey-log"
        thread.start()
        LogWriter.flushAtExit(self)
    }

    /// Lines dropped since start, for tests and the metric's first value.
    public var droppedLines: Int { droppedTotal.load(ordering: .relaxed) }

    /// Queues `line`, or drops it when the buffer is full. Never blocks on the output.
    public func append(_ line: [UInt8]) {
        enum Outcome { case queued, wakeWriter, dropped(Counter?) }
        let outcome: Outcome = state.withLock { state in
            guard state.pending.count + line.count <= capacity else {
                state.unreported += 1
                return .dropped(state.droppedLines)
            }
            state.pending.append(contentsOf: line)
            guard state.writerIdle else { return .queued }
            state.writerIdle = false
            return .wakeWriter
        }
        switch outcome {
        case .queued: break
        case .wakeWriter: wake.signal()
        case .dropped(let counter):
            droppedTotal.add(1, ordering: .relaxed)
            counter?.increment()
        }
    }

    /// Counts dropped lines in `counter` from now on, starting with those dropped so far.
    public func countDroppedLines(in counter: Counter) {
        state.withLock { $0.droppedLines = counter }
        let earlier = droppedLines
        if earlier > 0 { counter.increment(by: earlier) }
    }

    /// Waits until every queued line is written, or `timeout` passes: an output that is
    /// never read must not keep the process from exiting.
    public func flush(timeout: Duration) {
        let mustWait = state.withLock { state in
            if state.writerIdle, state.pending.isEmpty, state.unreported == 0 { return false }
            state.flushWaiting = true
            return true
        }
        guard mustWait else { return }
        let (seconds, attoseconds) = timeout.components
        _ = drained.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }

    private func run() {
        var batch: [UInt8] = []
        batch.reserveCapacity(capacity)
        while true {
            batch.removeAll(keepingCapacity: true)
            var dropped = 0
            let flushWaited: Bool = state.withLock { state in
                guard state.pending.isEmpty, state.unreported == 0 else {
                    swap(&batch, &state.pending)
                    swap(&dropped, &state.unreported)
                    return false
                }
                state.writerIdle = true
                defer { state.flushWaiting = false }
                return state.flushWaiting
            }
            if batch.isEmpty, dropped == 0 {
                if flushWaited { drained.signal() }
                wake.wait()
                continue
            }
            writeAll(batch)
            if dropped > 0 { writeAll(dropNote(dropped)) }
        }
    }

    /// Blocks this thread, and only this one, until the output takes the bytes. An output
    /// that fails (closed, full disk) loses them: there is nowhere else to report it.
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else if written < 0, errno == EAGAIN {
                    // An output shared with a process that made it non-blocking.
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, -1)
                } else {
                    return
                }
            }
        }
    }
}

extension LogWriter {
    private static let live = Mutex<[LogWriter]>([])

    /// Lines still queued when the process exits (a command's last error, the final access
    /// lines of a shutdown) are written first, within a second per writer.
    fileprivate static func flushAtExit(_ writer: LogWriter) {
        let first = live.withLock { writers in
            writers.append(writer)
            return writers.count == 1
        }
        guard first else { return }
        atexit {
            for writer in LogWriter.live.withLock({ $0 }) { writer.flush(timeout: .seconds(1)) }
        }
    }
}
