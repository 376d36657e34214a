/// One thing wrong with a configuration: where it is and what was expected.
///
/// Messages never contain secret values: they name keys, paths, files and environment
/// variables, never what a secret resolves to or the text of a scalar the user wrote.
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    /// The config file's path, or a label such as "command line".
    public var file: String
    /// 1-based; nil when the problem has no place in a file (command-line flags).
    public var line: Int?
    public var column: Int?
    /// Where in the document, e.g. `routes[2].upstream`; empty for the whole document.
    public var path: String
    public var message: String
    /// What would have been accepted, e.g. "a duration such as 500ms, 5s, 2m or 1h".
    public var expected: String?

    public init(
        file: String, line: Int? = nil, column: Int? = nil, path: String, message: String,
        expected: String? = nil
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
        self.expected = expected
    }

    /// `FILE:LINE:COLUMN: PATH: message (expected ...)`, the shape compilers use so that
    /// editors can jump to the place.
    public var description: String {
        var text = file
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        text += ": "
        if !path.isEmpty { text += path + ": " }
        text += message
        if let expected { text += " (expected \(expected))" }
        return text
    }
}

/// Every problem found in one configuration; loading never stops at the first.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(_ problems: [ConfigProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
