import QuireSupport

/// What the broker loop does with the store on the job machine's behalf: recover at start, write a
/// ``JobBatch``, answer a ``JobLoad``, sweep expired results. The machine never calls these itself.
extension SQLiteJobStore {
    /// Requeues jobs a stopped broker left running and builds the machine that holds every active job.
    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine {
        let recovered = try batch { () throws(SQLiteError) in try recover(now: now) }
        let services: [String]
        do {
            services = try knownServices()
        } catch {
            throw JobStoreError(error)
        }
        return JobMachine(configuration: configuration, recovered: recovered, knownServices: services, lastSequence: lastSequence, now: now)
    }

    /// Writes the batches, in order, in one transaction (one fsync). One broker owns the file: no
    /// update is fenced, no key taken by another broker.
    @discardableResult
    func write(_ batches: [JobBatch]) throws(JobStoreError) -> JobWriteOutcome {
        try batch { () throws(SQLiteError) in
            for changes in batches {
                for change in changes.rowChanges {
                    switch change {
                    case .service(let name): try rememberService(name, now: changes.now)
                    case .delete(let id): try delete(id: id)
                    case .insert(let insert): try self.insert(insert.record, request: insert.request)
                    case .update(let update): try self.update(update.record, reply: update.reply)
                    }
                }
            }
        }
        return JobWriteOutcome()
    }

    func load(_ load: JobLoad) -> JobLoad.Result {
        do {
            switch load {
            case .key(let owner, let key, _): return .record(try record(owner: owner, idempotencyKey: key))
            case .job(let id, _): return .record(try record(id: id))
            case .reply(let job, _): return .frames(try reply(id: job.id))
            case .request(let id): return .frames(try request(id: id))
            }
        } catch {
            return .failed(JobStoreError(error))
        }
    }

    /// Deletes finished jobs whose results expired at or before `now`; returns how many.
    func sweepExpired(now: Int64) throws(JobStoreError) -> Int {
        try batch { () throws(SQLiteError) in try sweep(now: now) }
    }
}
