/// Where a node starts in the document, counted from 1 as editors count.
public struct YAMLMark: Sendable, Equatable {
    public var line: Int
    public var column: Int
}

/// A node of a YAML document as libyaml reads it, before any value is typed: scalars are
/// text with the style they were written in and their explicit tag, if any. Aliases are
/// already replaced by the node their anchor names.
struct YAMLNode: Sendable {
    enum Content: Sendable {
        case scalar(YAMLScalar)
        case sequence([YAMLNode])
        case mapping([YAMLPair])
    }

    var content: Content
    var mark: YAMLMark

    /// A null scalar (`YAMLScalar.isNull`): a key with a null value counts as absent.
    var isNull: Bool {
        guard case .scalar(let scalar) = content else { return false }
        return scalar.isNull
    }

    /// The empty document: a plain empty scalar, which reads as null.
    static let empty = YAMLNode(content: .scalar(YAMLScalar(text: "", quoted: false, tag: nil)), mark: YAMLMark(line: 1, column: 1))
}

struct YAMLScalar: Sendable {
    var text: String
    /// Written in quotes or as a block (`|`, `>`): a string whatever it looks like.
    var quoted: Bool
    /// An explicit tag (`!!str 3`), expanded (`tag:yaml.org,2002:str`).
    var tag: String?

    /// Plain and untagged: the only kind YAML's rules type by its look.
    var isPlain: Bool { !quoted && tag == nil }
}

/// One pair of a mapping; a mapping keeps its pairs in document order.
struct YAMLPair: Sendable {
    var key: YAMLNode
    var value: YAMLNode
}
