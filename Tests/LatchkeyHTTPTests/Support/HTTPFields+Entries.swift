@testable import LatchkeyHTTP

extension HTTPFields {
    /// The index entries in order, copied out of the section's buffer for a test to look at.
    var entries: [Entry] {
        (0..<entryCount).map(entry(at:))
    }
}
