#if canImport(Glibc)
import Glibc
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Whether `other` holds the same bytes: one `memcmp`, for the hot path, where
    /// `elementsEqual` went a byte at a time through its generic implementation.
    @inlinable
    public func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count == other.count else { return false }
        guard let mine = baseAddress, let theirs = other.baseAddress else { return true }
        return memcmp(mine, theirs, count) == 0
    }
}
