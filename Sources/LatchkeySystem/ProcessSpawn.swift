#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// posix_spawnp(3), once for every program Latchkey starts: an empty signal mask and default
/// dispositions for `defaultSignals` (a CLI that blocks the termination signals and ignores
/// SIGPIPE must not hand that on). Latchkey's own descriptors are close-on-exec.
enum ProcessSpawn {
    /// `environment` nil: Latchkey's own. `nullStreams`: standard input, output and error
    /// on /dev/null instead of Latchkey's. Throws the spawn's errno.
    static func spawn(_ command: [String], environment: [String: String]?, nullStreams: Bool, defaultSignals: [Int32]) throws(SystemError) -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if nullStreams {
            for fd: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }

        var arguments = command.map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        arguments.append(nil)
        var pairs = environment.map { variables in variables.map { strdup("\($0.key)=\($0.value)") } }
        defer { pairs?.forEach { free($0) } }
        pairs?.append(nil)
        var pid = pid_t()
        let status = if pairs != nil {
            posix_spawnp(&pid, command[0], &actions, &attributes, arguments, &pairs!)
        } else {
            posix_spawnp(&pid, command[0], &actions, &attributes, arguments, environ)
        }
        guard status == 0 else { throw SystemError(call: "posix_spawnp", errno: status) }
        return pid
    }
}
