// libFuzzer entry point for HTTP1ExchangeMachine. Not part of the package: Scripts/fuzz.sh
// builds it with FuzzDriving.swift, FuzzedResponseDecoder.swift, FuzzScript.swift and the
// Exchange*.swift files against LatchkeyUpstream and all it imports (which SwiftPM builds
// instrumented and compiled for testing: the machine is internal), into its own binary.
//
// The input is a script (ExchangeEvent.swift): the request's shape, then one exchange's
// events — connections, body slices, writes the connection takes in part or refuses,
// response bytes (from the input or pieces of responses), closes, resets, the delegate's
// pauses and cancels, timers, time passing forward. ExchangeGlue plays HTTP1Transfer and
// traps when an answer of the machine breaks an invariant: after every event, its state
// against the glue's account (ExchangeGlue+Checks.swift); after the script, what it
// delivered against ResponseDecoder's transcript of the same bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func exchangeMachineFuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var script = FuzzScript(UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count))
    var glue = ExchangeGlue(request: ExchangeRequest(reading: &script))
    glue.checkInvariants()
    while !script.isAtEnd {
        glue.perform(ExchangeEvent(reading: &script))
        glue.checkInvariants()
    }
    glue.checkAgainstTheDecoder()
    return 0
}
