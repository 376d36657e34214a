#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a YAML config into a validated `Config`, or throws every problem it has.
///
/// Two passes over one parse: YAML syntax (with libyaml's line), then the validator's
/// walk over the nodes, which reads each value where it checks it (wrong types, unknown
/// keys, defaults, ranges, references, security rules). Every problem carries its path,
/// by which an index of the node tree's marks places it.
public enum ConfigLoader {
    public struct Options: Sendable {
        /// Read secret files and environment variables and check that TLS files are
        /// readable, so that `check` reports what `serve` would fail on at start. Off for
        /// validating a config on a machine that does not hold its secrets.
        public var checkExternal: Bool
        /// Where `env:` secrets are looked up.
        public var environment: [String: String]
        /// Told each warning of a configuration that loads (a certificate that expires
        /// within 7 days), placed as problems are.
        public var warn: @Sendable (ConfigProblem) -> Void

        public init(checkExternal: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment,
                    warn: @escaping @Sendable (ConfigProblem) -> Void = { _ in }) {
            self.checkExternal = checkExternal
            self.environment = environment
            self.warn = warn
        }
    }

    /// Larger than any sane config; stops `--config /dev/zero` from eating memory.
    static let maxFileBytes = 4 * 1024 * 1024

    /// Loads the file at `path`. Relative paths inside it (secret files, CA files, Unix
    /// sockets) are taken against the file's directory.
    public static func load(path: String, options: Options = .init()) throws(ConfigErrors) -> Config {
        let text: String
        do {
            text = try readConfigFile(path)
        } catch {
            throw ConfigErrors([ConfigProblem(file: path, path: "", message: error.message)])
        }
        let directory: String? = path.lastIndex(of: "/").map { String(path[..<$0]).isEmpty ? "/" : String(path[..<$0]) }
        return try load(yaml: text, sourceName: path, baseDirectory: directory, options: options)
    }

    /// Loads YAML text; `sourceName` labels the problems (usually the file's path).
    public static func load(
        yaml: String, sourceName: String, baseDirectory: String? = nil, options: Options = .init()
    ) throws(ConfigErrors) -> Config {
        let root: YAMLNode
        do throws(YAMLSyntaxError) {
            root = try YAMLComposer.compose(yaml)
        } catch {
            throw ConfigErrors([ConfigProblem(
                file: sourceName, line: error.mark?.line, column: error.mark?.column, path: "",
                message: "YAML syntax error: " + error.message
            )])
        }
        let shapes = ShapeProblems()
        var validator = ConfigValidator(options: .init(
            baseDirectory: baseDirectory, checkExternal: options.checkExternal, environment: options.environment
        ))
        let document = root.isNull ? nil : ConfigNode(node: root, path: .root, problems: shapes)
        let config = validator.validate(document)

        // The index of every node's place is made only for problems to place: a config
        // without any never pays for it.
        let pending = shapes.problems + validator.diagnostics.problems
        guard pending.isEmpty else {
            throw ConfigErrors(NodeIndex(root: root).place(pending, file: sourceName))
        }
        let warnings = validator.diagnostics.warnings
        if !warnings.isEmpty { NodeIndex(root: root).place(warnings, file: sourceName).forEach(options.warn) }
        return config
    }

    private static func readConfigFile(_ path: String) throws(SecretError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { throw SecretError("no such file") }
            throw SecretError("cannot read the file")
        }
        guard data.count <= maxFileBytes else { throw SecretError("larger than \(maxFileBytes) bytes") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Where each path of the document sits, from the marks libyaml records on nodes.
struct NodeIndex {
    enum Kind {
        case mapping, sequence, scalar, null
    }

    struct Entry {
        var keyMark: YAMLMark?
        var valueMark: YAMLMark?
        var kind: Kind
    }

    private var entries: [ConfigPath: Entry] = [:]

    init(root: YAMLNode) {
        add(root, at: .root, keyMark: nil)
    }

    private mutating func add(_ node: YAMLNode, at path: ConfigPath, keyMark: YAMLMark?) {
        switch node.content {
        case .mapping(let mapping):
            entries[path] = Entry(keyMark: keyMark, valueMark: node.mark, kind: .mapping)
            for pair in mapping {
                guard case .scalar(let name) = pair.key.content else { continue }
                add(pair.value, at: path / name.text, keyMark: pair.key.mark)
            }
        case .sequence(let sequence):
            entries[path] = Entry(keyMark: keyMark, valueMark: node.mark, kind: .sequence)
            for (offset, element) in sequence.enumerated() {
                add(element, at: path[offset], keyMark: element.mark)
            }
        case .scalar(let scalar):
            entries[path] = Entry(keyMark: keyMark, valueMark: node.mark, kind: scalar.isNull ? .null : .scalar)
        }
    }

    /// Gives each problem the line of its node, or of the nearest ancestor present in the
    /// document (for a missing key, the mapping that lacks it); sorted by position.
    func place(_ pending: [PendingProblem], file: String) -> [ConfigProblem] {
        var seen: Set<String> = []
        var placed: [ConfigProblem] = []
        for problem in pending {
            var mark: YAMLMark?
            var cursor: ConfigPath? = problem.path
            var exact = true
            while let path = cursor, mark == nil {
                if let entry = entries[path] {
                    mark = (exact && problem.anchor == .key) ? (entry.keyMark ?? entry.valueMark) : (entry.valueMark ?? entry.keyMark)
                }
                cursor = path.parent
                exact = false
            }
            var message = problem.message
            if message == "wrong type", let kind = entries[problem.path]?.kind {
                message = switch kind {
                case .mapping: "found a mapping"
                case .sequence: "found a list"
                case .scalar: "invalid value"
                case .null: "missing value"
                }
            }
            let result = ConfigProblem(
                file: file, line: mark?.line, column: mark?.column, path: problem.path.description,
                message: message, expected: problem.expected
            )
            if seen.insert(result.description).inserted {
                placed.append(result)
            }
        }
        // Stable: problems on one line keep the order they were found in.
        return placed.enumerated().sorted { a, b in
            let left = (a.element.line ?? .max, a.element.column ?? 0, a.offset)
            let right = (b.element.line ?? .max, b.element.column ?? 0, b.offset)
            return left < right
        }.map(\.element)
    }
}
