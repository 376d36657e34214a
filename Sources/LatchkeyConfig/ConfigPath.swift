/// A place in the config document: `routes[2].inject[0].header`.
struct ConfigPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    var components: [Component]

    init(_ components: [Component] = []) {
        self.components = components
    }

    static let root = ConfigPath()

    func key(_ name: String) -> ConfigPath { appending(.key(name)) }
    func index(_ index: Int) -> ConfigPath { appending(.index(index)) }

    /// One array made, not two: every value the validator reads gets its path, 300,000 of
    /// them at 10,000 routes and identities.
    func appending(_ component: Component) -> ConfigPath {
        var components = components
        components.append(component)
        return ConfigPath(components)
    }
    static func / (path: ConfigPath, name: String) -> ConfigPath { path.key(name) }
    subscript(index: Int) -> ConfigPath { self.index(index) }

    var parent: ConfigPath? {
        components.isEmpty ? nil : ConfigPath(Array(components.dropLast()))
    }

    var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let name):
                if !text.isEmpty { text += "." }
                text += ConfigSyntax.isSafeToEcho(name) ? name : "<key not shown>"
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }
}

/// A problem before it has a line: found while decoding or validating, placed later
/// through the node index.
struct PendingProblem: Sendable {
    enum Anchor: Sendable {
        /// Point at the key (unknown keys).
        case key
        /// Point at the value (bad values, missing keys inside a mapping).
        case value
    }

    var path: ConfigPath
    var message: String
    var expected: String?
    var anchor: Anchor = .value
}

/// Collects problems in the order they are found.
struct Diagnostics: Sendable {
    var problems: [PendingProblem] = []
    /// What works but will not for long (a certificate about to expire): reported, never
    /// a reason to refuse the configuration.
    var warnings: [PendingProblem] = []

    var isEmpty: Bool { problems.isEmpty }

    mutating func error(_ path: ConfigPath, _ message: String, expected: String? = nil) {
        problems.append(PendingProblem(path: path, message: message, expected: expected))
    }

    mutating func warning(_ path: ConfigPath, _ message: String) {
        warnings.append(PendingProblem(path: path, message: message))
    }
}
