import Foundation
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyTLS

extension ListenerCertificates {
    /// What a reload puts in place: the contexts of the listeners whose `tls` (or CA) it
    /// changes, made beforehand.
    struct Prepared: Sendable {
        fileprivate let config: Config
        fileprivate let plans: [ListenerTLSPlan?]
        fileprivate let caFiles: [String]
        fileprivate let contexts: [Int: (context: TLSServerContext, leaf: Certificate)]
        /// The watched files as they were before the contexts were made from them: a file
        /// that changes before `apply` then differs, and the watcher makes its context again
        /// rather than keep the older one the reload put in place.
        fileprivate let signatures: [String: FileSignature?]
    }

    /// The contexts `loaded` needs, made without touching what runs; throws, naming the
    /// listener and the file, when one cannot be made (the reload is refused then). The
    /// listeners are the running ones, each still with or without TLS (ReloadDecision).
    func prepare(_ loaded: Config, now: Date = Date()) throws(RuntimeError) -> Prepared {
        try state.withLock { state throws(RuntimeError) -> Prepared in
            var next = state
            next.config = loaded
            next.plans = loaded.listeners.map(ListenerTLSPlan.init)
            // Another CA: `ca:` or the store's directory or key changed.
            let caChanged = loaded.ca != state.config.ca || loaded.store != state.config.store
            var contexts: [Int: (context: TLSServerContext, leaf: Certificate)] = [:]
            let signatures = FileSignature.of(next.plans.compactMap { $0 }.flatMap(\.files) + next.caFiles)
            for (index, plan) in next.plans.enumerated() {
                guard let plan, plan != state.plans[index] || (plan.usesLocalCA && caChanged) else { continue }
                do throws(RuntimeError) {
                    let identity = try Self.identity(for: plan, state: &next, leaves: leaves, environment: environment, logger: logger, now: now)
                    contexts[index] = (try Self.context(identity, for: plan, ticketKeys: ticketKeys), identity.leaf)
                } catch {
                    throw RuntimeError("listener \(loaded.listeners[index].name): \(error.description)")
                }
            }
            return Prepared(config: loaded, plans: next.plans, caFiles: next.caFiles, contexts: contexts,
                            signatures: signatures.merging(FileSignature.of(next.caFiles)) { before, _ in before })
        }
    }

    /// New connections get the prepared contexts; the watcher follows the loaded files.
    func apply(_ prepared: Prepared) {
        state.withLock { state in
            state.config = prepared.config
            state.plans = prepared.plans
            state.caFiles = prepared.plans.contains { $0?.usesLocalCA == true } ? prepared.caFiles : []
            for (index, made) in prepared.contexts {
                listeners[index]?.replace(made.context)
                state.leaves[index] = made.leaf
                state.failures[index] = nil
            }
            state.signatures = prepared.signatures
        }
    }
}
