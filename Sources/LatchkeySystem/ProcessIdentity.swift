#if canImport(Glibc)
import Glibc
#endif

/// Who runs Latchkey, as file permissions see it.
public struct ProcessIdentity: Sendable, Equatable {
    public var user: uid_t
    /// The effective group and the supplementary ones.
    public var groups: Set<gid_t>

    public init(user: uid_t, groups: Set<gid_t>) {
        self.user = user
        self.groups = groups
    }

    /// geteuid(2), getegid(2) and getgroups(2): the supplementary groups (Kubernetes'
    /// fsGroup is one of them).
    public static func current() -> ProcessIdentity {
        var groups: Set<gid_t> = [getegid()]
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let filled = getgroups(count, &list)
            if filled > 0 { groups.formUnion(list.prefix(Int(filled))) }
        }
        return ProcessIdentity(user: geteuid(), groups: groups)
    }
}
