import Glibc
import Testing
@testable import LatchkeyAuth
import LatchkeySystem

/// Which owners, groups and modes make a file private enough, for any user running
/// Latchkey (no root needed: the decision is apart from stat(2)).
@Suite struct PrivateFileTests {
    /// A pod's user: uid 10001, primary group 10001, as Kubernetes runs the image.
    static let pod = ProcessIdentity(user: 10001, groups: [10001])

    struct Case: CustomTestStringConvertible, Sendable {
        var label: String
        var owner: UInt32
        var group: UInt32
        var mode: UInt32
        var kind: PrivateFile.Kind
        /// nil: accepted.
        var problem: String?
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "own key file 0600", owner: 10001, group: 10001, mode: 0o600, kind: .keyFile),
        Case(label: "own key file 0400", owner: 10001, group: 10001, mode: 0o400, kind: .keyFile),
        Case(label: "own key file readable by its group", owner: 10001, group: 10001, mode: 0o440, kind: .keyFile,
             problem: "key file /k is accessible by others (mode 0440); run chmod 600 /k"),
        Case(label: "root's key file 0400", owner: 0, group: 0, mode: 0o400, kind: .keyFile),
        Case(label: "a Kubernetes Secret with fsGroup: root's, 0440, Latchkey's group", owner: 0, group: 10001, mode: 0o440,
             kind: .keyFile),
        Case(label: "root's, 0640, Latchkey's group", owner: 0, group: 10001, mode: 0o640, kind: .keyFile),
        Case(label: "root's, 0460: the group may write", owner: 0, group: 10001, mode: 0o460, kind: .keyFile,
             problem: "key file /k is accessible by others (mode 0460); run chmod 440 /k"),
        Case(label: "root's, 0444: anyone may read", owner: 0, group: 10001, mode: 0o444, kind: .keyFile,
             problem: "key file /k is accessible by others (mode 0444); run chmod 440 /k"),
        Case(label: "root's, 0440, another group", owner: 0, group: 0, mode: 0o440, kind: .keyFile,
             problem: "key file /k is accessible by others (mode 0440); run chmod 600 /k"),
        Case(label: "another user's key file", owner: 1000, group: 10001, mode: 0o400, kind: .keyFile,
             problem: "key file /k is owned by uid 1000, not by uid 10001 that runs Latchkey; it must belong to that user"),
        Case(label: "a store file is never root's", owner: 0, group: 10001, mode: 0o600, kind: .storeFile,
             problem: "store file /k is owned by uid 0, not by uid 10001 that runs Latchkey; it must belong to that user"),
        Case(label: "a store file readable by its group", owner: 10001, group: 10001, mode: 0o640, kind: .storeFile,
             problem: "store file /k is accessible by others (mode 0640); run chmod 600 /k"),
    ]

    @Test(arguments: cases)
    func decides(_ c: Case) {
        #expect(PrivateFile.problem("/k", owner: c.owner, group: c.group, mode: c.mode, kind: c.kind, process: Self.pod) == c.problem)
    }

    @Test func rootRunningLatchkeyNeverLetsItsGroupRead() {
        let root = ProcessIdentity(user: 0, groups: [0])
        #expect(PrivateFile.problem("/k", owner: 0, group: 0, mode: 0o440, kind: .keyFile, process: root)
            == "key file /k is accessible by others (mode 0440); run chmod 600 /k")
    }

    @Test func theCurrentProcessIncludesItsEffectiveGroup() {
        let current = ProcessIdentity.current()
        #expect(current.groups.contains(getegid()))
        #expect(current.user == geteuid())
    }
}
