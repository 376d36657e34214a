import LatchkeyHTTP
import LatchkeyTestSupport
import Testing

/// Property: any request we can serialise decodes back to itself, whole and in random
/// splits, alone or pipelined. Seeded, so a failure names the seed that reproduces it.
@Suite struct RequestDecoderRoundTripTests {
    struct Generated {
        var wire: [UInt8] = []
        var expected: [DecoderDriver.DecodedRequest] = []
    }

    @Test(arguments: 0..<8)
    func randomRequestsRoundTrip(batch: Int) {
        for index in 0..<40 {
            let seed = UInt64(batch * 1000 + index)
            var random = SeededGenerator(seed: seed)
            let generated = Self.stream(using: &random)
            let whole = DecoderDriver.whole(generated.wire)
            #expect(whole.error == nil, "seed \(seed): \(whole)")
            #expect(whole.requests == generated.expected, "seed \(seed)")
            #expect(whole.leftover == 0, "seed \(seed)")
            for _ in 0..<4 {
                let cutCount = Int.random(in: 1...12, using: &random)
                let cuts = (0..<cutCount).map { _ in Int.random(in: 0...generated.wire.count, using: &random) }.sorted()
                #expect(DecoderDriver.run(generated.wire, cuts: cuts) == whole, "seed \(seed), cuts \(cuts)")
            }
            if index % 8 == 0 {
                #expect(DecoderDriver.byteByByte(generated.wire) == whole, "seed \(seed), byte by byte")
            }
        }
    }

    /// One to five pipelined requests.
    static func stream(using random: inout SeededGenerator) -> Generated {
        var generated = Generated()
        for _ in 0..<Int.random(in: 1...5, using: &random) {
            request(into: &generated, using: &random)
        }
        return generated
    }

    static func request(into generated: inout Generated, using random: inout SeededGenerator) {
        let method = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "X-Custom.Method"].randomElement(using: &random)!
        let target = randomTarget(using: &random)
        let version: HTTPVersion = Int.random(in: 0..<6, using: &random) == 0 ? .http1_0 : .http1_1
        var wire = Array("\(method) \(target) \(version)\r\n".utf8)
        var fields = HTTPFields()
        func add(_ name: String, _ value: String) {
            fields.append(name: name, value: value)
            wire += "\(name):\(randomWhitespace(using: &random))\(value)\(randomWhitespace(using: &random))\r\n".utf8
        }

        let hostPosition = Int.random(in: 0...3, using: &random)
        let plainCount = Int.random(in: 0...6, using: &random)
        var connectionClose = false
        var connectionKeepAlive = false
        var expectsContinue = false
        for position in 0...max(plainCount, hostPosition) {
            if position == hostPosition, version == .http1_1 || Bool.random(using: &random) {
                add(["Host", "host", "HOST"].randomElement(using: &random)!, "example.com:\(Int.random(in: 1...65535, using: &random))")
            }
            if position < plainCount { add(randomName(using: &random), randomValue(using: &random)) }
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            add("Connection", "close")
            connectionClose = true
        case 1:
            add("connection", "Keep-Alive, X-Hop")
            connectionKeepAlive = true
        default: break
        }
        if Int.random(in: 0..<5, using: &random) == 0 {
            add("Expect", "100-continue")
            expectsContinue = true
        }

        let body = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        var framing = BodyFraming.none
        var trailers = HTTPFields()
        let useChunked = version == .http1_1 && Bool.random(using: &random)
        if useChunked {
            add("Transfer-Encoding", ["chunked", "Chunked", " , chunked"].randomElement(using: &random)!.trimmingOWS)
            framing = .chunked
        } else if !body.isEmpty || Bool.random(using: &random) {
            add("Content-Length", String(body.count))
            framing = .length(UInt64(body.count))
        }
        wire += "\r\n".utf8
        if useChunked {
            var offset = 0
            while offset < body.count {
                let size = min(Int.random(in: 1...120, using: &random), body.count - offset)
                var hex = String(size, radix: 16, uppercase: Bool.random(using: &random))
                hex = String(repeating: "0", count: Int.random(in: 0...2, using: &random)) + hex
                wire += hex.utf8
                if Int.random(in: 0..<4, using: &random) == 0 { wire += " ;name=\"v a l\";flag".utf8 }
                wire += "\r\n".utf8
                wire += body[offset..<(offset + size)]
                wire += "\r\n".utf8
                offset += size
            }
            wire += "0\r\n".utf8
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                let name = randomName(using: &random)
                let value = randomValue(using: &random)
                trailers.append(name: name, value: value)
                wire += "\(name): \(value)\r\n".utf8
            }
            wire += "\r\n".utf8
        } else {
            wire += body
        }
        if Int.random(in: 0..<10, using: &random) == 0 { wire += "\r\n".utf8 } // stray CRLF

        let keepAlive = version == .http1_1 ? !connectionClose : connectionKeepAlive
        let head = RequestHead(
            method: method, target: target, version: version, fields: fields, framing: framing,
            keepAlive: keepAlive, expectsContinue: expectsContinue && version == .http1_1
        )
        generated.wire += wire
        generated.expected.append(DecoderDriver.DecodedRequest(head: head, body: body, complete: true, trailers: trailers))
    }

    static func randomTarget(using random: inout SeededGenerator) -> String {
        let characters = Array("abcxyzABC0123456789-._~!$&'()*+,;=:@%/")
        var path = "/"
        for _ in 0..<Int.random(in: 0...30, using: &random) { path.append(characters.randomElement(using: &random)!) }
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return "http://example.com" + path
        case 1: return path + "?q=" + String(Int.random(in: 0...999, using: &random)) + "&r=%20"
        default: return path
        }
    }

    static func randomName(using random: inout SeededGenerator) -> String {
        let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
        // "X-" keeps clear of the fields the decoder interprets.
        return "X-" + String((0..<Int.random(in: 1...12, using: &random)).map { _ in characters.randomElement(using: &random)! })
    }

    /// A value without leading or trailing whitespace (the decoder trims it), with inner
    /// spaces, tabs, any visible ASCII and some UTF-8.
    static func randomValue(using random: inout SeededGenerator) -> String {
        var value = ""
        for _ in 0..<Int.random(in: 0...40, using: &random) {
            switch Int.random(in: 0..<20, using: &random) {
            case 0: value += " "
            case 1: value += "\t"
            case 2: value += ["é", "Ω", "😀"].randomElement(using: &random)!
            default: value.append(Character(Unicode.Scalar(UInt8.random(in: 0x21...0x7E, using: &random))))
            }
        }
        return value.trimmingOWS
    }

    static func randomWhitespace(using random: inout SeededGenerator) -> String {
        ["", "", " ", "  ", "\t", " \t "].randomElement(using: &random)!
    }
}

private extension String {
    var trimmingOWS: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
