import Glibc
@testable import LatchkeyLoop
import Testing

/// `IOEvents.edgeTriggered` on a real epoll instance: a socket left unread is reported
/// once per arrival, not at every wait as a level-triggered one is, and asking for its
/// events again reports it again. The loop runs on the test's thread, its turns counted by
/// a timer, so no count depends on how fast anything runs.
@Suite struct EventLoopEdgeTriggerTests {
    @Test func anUnreadSocketIsReportedOncePerArrivalAndAgainWhenAskedAgain() throws {
        let loop = try EventLoop()
        let edge = try SocketPair()
        let level = try SocketPair()
        let edgeReports = CountingHandler()
        let levelReports = CountingHandler()
        let edgeRegistration = try loop.register(fd: edge.near, events: [.readable, .edgeTriggered], handler: edgeReports)
        _ = try loop.register(fd: level.near, events: .readable, handler: levelReports)
        var seen: [Int] = []
        let turns = TurnTimer(loop: loop, turns: 30) { turn in
            switch turn {
            case 1:
                edge.sendByte()
                level.sendByte()
            case 10:
                seen.append(edgeReports.count)
                edge.sendByte()
            case 20:
                seen.append(edgeReports.count)
                try? loop.modify(edgeRegistration, events: [.readable, .edgeTriggered])
            default:
                break
            }
        }
        turns.start()
        try loop.run()
        #expect(seen == [1, 2])
        #expect(edgeReports.count == 3)
        // The level-triggered socket, unread as well, was reported at every wait after its byte.
        #expect(levelReports.count >= 28)
    }
}

private final class CountingHandler: IOHandler {
    var count = 0
    func handleIO(_ events: IOEvents) {
        if events.contains(.readable) { count += 1 }
    }
}

/// Fires once per loop turn (each re-arm lies past the turn's `now`), `turns` times, then
/// stops the loop.
private final class TurnTimer: LoopTimer {
    let loop: EventLoop
    let turns: Int
    let step: (Int) -> Void
    var turn = 0

    init(loop: EventLoop, turns: Int, step: @escaping (Int) -> Void) {
        self.loop = loop
        self.turns = turns
        self.step = step
    }

    func start() {
        loop.arm(self, after: .milliseconds(1))
    }

    override func timerFired() {
        turn += 1
        step(turn)
        if turn == turns { return loop.stop() }
        loop.arm(self, after: .milliseconds(1))
    }
}

/// A connected pair of non-blocking Unix stream sockets: the loop watches `near`; bytes
/// come from `far`.
private final class SocketPair {
    let near: Int32
    let far: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SystemError(call: "socketpair", errno: errno)
        }
        near = fds[0]
        far = fds[1]
    }

    deinit {
        close(near)
        close(far)
    }

    func sendByte() {
        var byte: UInt8 = 1
        #expect(write(far, &byte, 1) == 1)
    }
}
