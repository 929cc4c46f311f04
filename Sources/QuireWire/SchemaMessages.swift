import Foundation

/// Which member of a JSON body broke its schema, so that a `bad_request` (or RFC 6749
/// `invalid_request`) names it in the protocol's words instead of repeating JSONDecoder's.
public enum SchemaMessages {
    /// The first of `keys` present in `object` whose value does not decode as `T` when it is the only
    /// member; nil when each decodes alone (the problem is elsewhere).
    public static func firstUndecodable<T: Decodable>(_ type: T.Type, in object: [String: Any], keys: [String]) -> String? {
        keys.first { key in
            guard let value = object[key] else { return false }
            let alone: [String: Any] = [key: value]
            guard JSONSerialization.isValidJSONObject(alone), let data = try? JSONSerialization.data(withJSONObject: alone) else { return true }
            return (try? JSONDecoder().decode(T.self, from: data)) == nil
        }
    }
}
