import CHiredis

/// A Redis answer (RESP2) copied out of hiredis' redisReply, which is freed at once.
enum RedisReply: Sendable, Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case null
    case array([RedisReply])
    /// `-ERR …`, `-WRONGTYPE …`: the server refused the command.
    case error(String)

    init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        func text() -> [UInt8] {
            guard let bytes = value.str else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: value.len))
        }
        switch value.type {
        case REDIS_REPLY_STRING: self = .string(text())
        case REDIS_REPLY_STATUS: self = .status(String(decoding: text(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: self = .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            self = .array((0..<value.elements).map { index in
                value.element[index].map { RedisReply(UnsafePointer($0)) } ?? .null
            })
        case REDIS_REPLY_ERROR: self = .error(String(decoding: text(), as: UTF8.self))
        default: self = .null
        }
    }
}
