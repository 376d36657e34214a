/// Where the problems with the document's shape go (a wrong type, an unknown key, an
/// unreadable duration): one sink per load, shared by every cursor. They are listed before
/// the validator's own problems.
final class ShapeProblems {
    private(set) var problems: [PendingProblem] = []

    /// The loader names what was found instead (a mapping, a list, null) from the node index.
    func wrongType(_ path: ConfigPath, expected: String?) {
        problems.append(PendingProblem(path: path, message: "wrong type", expected: expected))
    }

    func invalid(_ path: ConfigPath, _ message: String, expected: String?) {
        problems.append(PendingProblem(path: path, message: message, expected: expected))
    }

    func unknownKey(_ path: ConfigPath, name: String, known: [String]) {
        var message = "unknown key" + ConfigSyntax.quoted(name)
        if let suggestion = ConfigSyntax.closestMatch(to: name, in: known) {
            message += "; did you mean '\(suggestion)'?"
        }
        problems.append(PendingProblem(
            path: path, message: message,
            expected: "one of " + known.joined(separator: ", "), anchor: .key
        ))
    }
}
