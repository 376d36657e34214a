/// The request fields the decoder itself interprets, recognised from the name's bytes.
enum KnownField {
    case host
    case contentLength
    case transferEncoding
    case connection
    case expect
    case upgrade
    case other

    static func classify(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) -> KnownField {
        // The length decides which single comparison to make.
        switch name.count {
        case 4: ASCII.equalsCaseInsensitive(bytes, name, "host") ? .host : .other
        case 6: ASCII.equalsCaseInsensitive(bytes, name, "expect") ? .expect : .other
        case 7: ASCII.equalsCaseInsensitive(bytes, name, "upgrade") ? .upgrade : .other
        case 10: ASCII.equalsCaseInsensitive(bytes, name, "connection") ? .connection : .other
        case 14: ASCII.equalsCaseInsensitive(bytes, name, "content-length") ? .contentLength : .other
        case 17: ASCII.equalsCaseInsensitive(bytes, name, "transfer-encoding") ? .transferEncoding : .other
        default: .other
        }
    }
}
