import ArgumentParser

/// The quick-start flags that say what to attach, shared by `serve` and `exec`.
struct QuickStartHeaders: ParsableArguments {
    @Option(name: .customLong("header"), help: "Quick start: a header to attach, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(name: .long, help: "Quick start: attach 'Authorization: Bearer <file contents>', re-read when the file changes.")
    var bearerTokenFile: String?

    var isEmpty: Bool { headers.isEmpty && bearerTokenFile == nil }
}
