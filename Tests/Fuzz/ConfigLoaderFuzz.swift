// libFuzzer entry point for the configuration's loader. Not part of the package:
// Scripts/fuzz.sh builds it against LatchkeyConfig and all it imports (which SwiftPM builds
// instrumented), into its own binary.
//
// The input is a configuration file's bytes, read as `latchkey check --skip-secrets` reads
// them: libyaml's events composed into nodes (YAMLComposer), then the validator's walk.
// Whatever the bytes, loading ends in a configuration or in problems, each with a message;
// a trap, a sanitizer error or a leak is a finding. Nothing outside the process is read:
// no secrets, no environment, no files.

import LatchkeyConfig

@_cdecl("LLVMFuzzerTestOneInput")
public func configLoaderFuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: start == nil ? 0 : count), as: UTF8.self)
    let options = ConfigLoader.Options(checkExternal: false, environment: [:])
    do throws(ConfigErrors) {
        _ = try ConfigLoader.load(yaml: text, sourceName: "fuzz.yaml", baseDirectory: "/nonexistent", options: options)
    } catch {
        precondition(!error.problems.isEmpty, "a configuration refused without a problem")
        for problem in error.problems {
            precondition(!problem.message.isEmpty, "a problem without a message")
            _ = problem.description
        }
    }
    return 0
}
