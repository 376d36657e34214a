#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

extension SystemError {
    /// strerror(3)'s words for the errno alone, for messages that name the call themselves.
    public var reason: String {
        String(cString: strerror(errno))
    }
}
