/// `google.rpc.Code`, the status Cloud Vision and the Firebase callable protocol both speak: its
/// number (an image's `error.code` in a batch), its name (`status` in their error bodies) and the HTTP
/// status it goes with (the callable protocol's table, which is Google's REST mapping).
enum GRPCStatus: Int, CaseIterable, Sendable {
    case ok = 0, cancelled, unknown, invalidArgument, deadlineExceeded, notFound, alreadyExists, permissionDenied, resourceExhausted,
         failedPrecondition, aborted, outOfRange, unimplemented, `internal`, unavailable, dataLoss, unauthenticated

    /// `INVALID_ARGUMENT`.
    var name: String {
        switch self {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        }
    }

    var httpStatus: Int {
        switch self {
        case .ok: 200
        case .invalidArgument, .failedPrecondition, .outOfRange: 400
        case .unauthenticated: 401
        case .permissionDenied: 403
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .resourceExhausted: 429
        case .cancelled: 499
        case .unimplemented: 501
        case .unavailable: 503
        case .deadlineExceeded: 504
        case .unknown, .internal, .dataLoss: 500
        }
    }

    /// The status of a failure.
    init(_ kind: GatewayFailure.Kind) {
        self = switch kind {
        case .invalidImage: .invalidArgument
        case .unauthenticated: .unauthenticated
        case .forbidden: .permissionDenied
        case .busy: .resourceExhausted
        case .unavailable: .unavailable
        case .internal: .internal
        }
    }

    /// The status of an image whose URL was not fetched: UNAVAILABLE when it could not be downloaded
    /// (what Vision answers then), PERMISSION_DENIED for a redirect off the allow-list, INVALID_ARGUMENT
    /// for what came back (too large, not an image), RESOURCE_EXHAUSTED when every fetch slot is taken.
    init(_ reason: FetchFailure.Reason) {
        self = switch reason {
        case .notAllowed: .permissionDenied
        case .couldNotDownload: .unavailable
        case .tooLarge, .notAnImage: .invalidArgument
        case .busy: .resourceExhausted
        }
    }

    /// The status Google's front names an HTTP status of its own with: the one that goes with it
    /// (INTERNAL for 500), NOT_FOUND for a 405 as for a 404, else INVALID_ARGUMENT (413, 431) or INTERNAL.
    init(answering http: Int) {
        if http == 405 {
            self = .notFound
        } else if let status = [Self.invalidArgument, .unauthenticated, .permissionDenied, .notFound, .resourceExhausted, .unavailable,
                                .deadlineExceeded, .internal].first(where: { $0.httpStatus == http }) {
            self = status
        } else {
            self = http >= 500 ? .internal : .invalidArgument
        }
    }
}

extension GatewayFailure.Kind {
    /// The HTTP status every API answers a call that failed so with (Google's mapping of its status).
    var httpStatus: Int { GRPCStatus(self).httpStatus }
}
