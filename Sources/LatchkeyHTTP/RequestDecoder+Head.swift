extension RequestDecoder {
    mutating func decodeHead(_ input: UnsafeRawBufferPointer, _ scanner: inout FieldSectionScanner) -> Step {
        switch scanner.scan(input, limits: limits) {
        case .needMore:
            let skipped = scanner.skippedBytes
            scanner.dropSkippedBytes()
            state = .head(scanner)
            return Step(consumed: skipped, event: .needMore)
        case .failure(let code):
            return Step(consumed: 0, event: .error(HTTPParseError(code)))
        case .complete(let end):
            let head: RequestHead
            do {
                head = try Self.parseHead(
                    input,
                    requestLine: scanner.requestLine,
                    fields: scanner.fieldLines,
                    fieldCount: scanner.fieldLineCount
                )
            } catch {
                return Step(consumed: 0, event: .error(error))
            }
            trailers = HTTPFields()
            switch head.framing {
            case .none, .length(0): state = .endPending
            case .length(let length): state = .fixedLength(remaining: length)
            case .chunked: state = .chunked(ChunkedBodyDecoder(.request))
            }
            return Step(consumed: end, event: .head(head))
        }
    }

    /// Builds the head from a complete section whose lines the scanner has checked to end
    /// in CRLF.
    static func parseHead(
        _ bytes: UnsafeRawBufferPointer,
        requestLine: Range<Int>,
        fields region: Range<Int>,
        fieldCount: Int
    ) throws(HTTPParseError) -> RequestHead {
        let line = try RequestLine.parse(bytes, requestLine)
        var fields = HTTPFields()
        let section = fields.storeSection(bytes, region, fields: fieldCount)
        var semantics = HeadSemantics()
        try FieldLine.forEach(in: bytes, region, .request) { (fieldLine: FieldLine) throws(HTTPParseError) in
            let name = FieldName.classify(bytes, fieldLine.name)
            try semantics.observe(name, bytes, fieldLine.value)
            try fieldLine.append(to: &fields, section, from: bytes, name, .request)
        }
        let verdict = try semantics.finish(version: line.version)
        // RFC 9110 §8.6: a recipient may replace a repeated, identical Content-Length with a
        // single one; do it so the next hop never sees the repetition.
        if semantics.contentLengthValueCount > 1, let length = semantics.contentLength {
            fields.set(name: .contentLength, value: String(length))
        }
        return RequestHead(
            method: line.method,
            target: line.target,
            version: line.version,
            fields: fields,
            framing: verdict.framing,
            keepAlive: verdict.keepAlive,
            expectsContinue: verdict.expectsContinue,
            asksUpgrade: verdict.asksUpgrade
        )
    }
}
