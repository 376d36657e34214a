/// The secrets log lines must never show, prepared once per set of values so that a line
/// costs about the same whatever their number: with 10,000 credentials, searching each
/// line for each secret in turn cost more than the request the line describes.
///
/// A line is scanned once for the secrets that occur in it (each position's first two
/// bytes against a bitmap of the secrets' first two bytes, then its first four against a
/// table of the secrets by theirs); those are then masked one by one, longest first, as
/// before. A few secrets are simply each looked for.
public final class SecretMask: Sendable {
    /// Every distinct non-empty value, longest first, so that a secret containing another
    /// is masked whole.
    public let values: [String]
    private let secrets: [[UInt8]]
    /// Indices into `secrets` of those of 4 bytes or more, by their first four bytes.
    private let byLeadingBytes: [UInt32: [Int]]
    /// Bit `b0 << 8 | b1` is set when a secret of 4 bytes or more starts with bytes b0 b1.
    private let leadingPairs: [UInt64]
    /// Indices of the secrets under 4 bytes, looked for in every line.
    private let shortSecrets: [Int]

    /// Up to this many secrets, each is looked for in turn (a memchr pass each): cheaper
    /// than the scan when there are few.
    static let scanAbove = 8

    public init(_ values: some Sequence<String>) {
        self.values = Set(values).filter { !$0.isEmpty }.sorted { $0.utf8.count > $1.utf8.count }
        secrets = self.values.map { Array($0.utf8) }
        var byLeadingBytes: [UInt32: [Int]] = [:]
        var leadingPairs = [UInt64](repeating: 0, count: 1 << 10)
        var shortSecrets: [Int] = []
        for (index, secret) in secrets.enumerated() {
            guard secret.count >= 4 else {
                shortSecrets.append(index)
                continue
            }
            byLeadingBytes[Self.leadingBytes(secret, at: 0), default: []].append(index)
            let pair = Int(secret[0]) << 8 | Int(secret[1])
            leadingPairs[pair >> 6] |= 1 << UInt64(pair & 63)
        }
        self.byLeadingBytes = byLeadingBytes
        self.leadingPairs = leadingPairs
        self.shortSecrets = shortSecrets
    }

    /// Replaces every occurrence of every secret in `line` with `[REDACTED]`.
    public func mask(_ line: inout [UInt8]) {
        for index in secrets.count <= Self.scanAbove ? Array(secrets.indices) : occurring(in: line) {
            LogRedaction.mask(secrets[index], in: &line)
        }
    }

    /// The indices of the secrets that occur in `line`, in `secrets`' order (longest first).
    private func occurring(in line: [UInt8]) -> [Int] {
        var found = shortSecrets
        if line.count >= 4 {
            for position in 0...(line.count - 4) {
                let pair = Int(line[position]) << 8 | Int(line[position + 1])
                guard leadingPairs[pair >> 6] & (1 << UInt64(pair & 63)) != 0,
                      let candidates = byLeadingBytes[Self.leadingBytes(line, at: position)] else { continue }
                for index in candidates where !found.contains(index) && Self.occurs(secrets[index], in: line, at: position) {
                    found.append(index)
                }
            }
        }
        return found.sorted()
    }

    private static func leadingBytes(_ bytes: [UInt8], at position: Int) -> UInt32 {
        UInt32(bytes[position]) | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2]) << 16 | UInt32(bytes[position + 3]) << 24
    }

    private static func occurs(_ secret: [UInt8], in line: [UInt8], at position: Int) -> Bool {
        position + secret.count <= line.count && line[position..<(position + secret.count)].elementsEqual(secret)
    }
}
