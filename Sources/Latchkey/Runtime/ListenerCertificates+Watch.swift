import Foundation
import LatchkeyLoop
import LatchkeyTLS

extension ListenerCertificates {
    /// One pass of the file watcher: the contexts whose files changed are made again, and
    /// hourly those of local-CA listeners whose leaf was re-minted (it nears its end, or
    /// the CA was renewed or rotated).
    func check(now: Date = Date()) {
        state.withLock { state in
            let current = FileSignature.of(Self.watchedFiles(state))
            // A file modified in the last seconds may be written again within its
            // timestamp's granularity (git's "racily clean" files), or be the first of a
            // pair being replaced: what uses it waits until it has settled, and then sees
            // one change, made once.
            let seconds = Int64(now.timeIntervalSince1970)
            let settling = Set(current.compactMap { path, signature in signature?.isRecent(at: seconds) == true ? path : nil })
            let changed = Set(current.compactMap { path, signature in
                !settling.contains(path) && state.signatures[path] != .some(signature) ? path : nil
            })
            let renewalDue = now >= state.nextRenewal
            if renewalDue { state.nextRenewal = now.addingTimeInterval(Self.renewalInterval) }
            let caChanged = state.caFiles.contains(where: changed.contains)
            for (index, plan) in state.plans.enumerated() {
                guard let plan, !plan.files.contains(where: settling.contains) else { continue }
                let filesChanged = plan.files.contains(where: changed.contains)
                guard filesChanged || (plan.usesLocalCA && (caChanged || renewalDue)) else { continue }
                renew(index, plan: plan, state: &state, unlessSameLeaf: !filesChanged, now: now)
            }
            for path in changed { state.signatures[path] = current[path] }
        }
    }

    /// Makes listener `index`'s context again and puts it in place, or logs why not and
    /// leaves the one in use. `unlessSameLeaf`: nothing but the local CA's leaf could have
    /// changed, and a context that presents the same one is kept.
    private func renew(_ index: Int, plan: ListenerTLSPlan, state: inout State, unlessSameLeaf: Bool, now: Date) {
        guard let tls = listeners[index] else { return }
        let name = state.config.listeners[index].name
        do {
            let identity = try Self.identity(for: plan, state: &state, leaves: leaves, environment: environment, logger: logger, now: now)
            if unlessSameLeaf, let leaf = state.leaves[index], leaf.isSame(as: identity.leaf) { return }
            tls.replace(try Self.context(identity, for: plan, ticketKeys: ticketKeys))
            state.leaves[index] = identity.leaf
            state.failures[index] = nil
            logger.info("tls certificate replaced", metadata: [
                "listener": .string(name), "subject": .string(identity.leaf.subject),
                "not_after": .string(identity.leaf.notAfter.formatted(.iso8601)),
            ])
        } catch {
            guard state.failures[index] != error.description else { return }
            state.failures[index] = error.description
            logger.error("cannot load the listener's new tls certificate; keeping the one in use", metadata: [
                "listener": .string(name), "error": .string(error.description),
            ])
        }
    }
}
