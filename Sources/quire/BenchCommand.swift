enum BenchCommand { static func run(_ args: [String]) throws -> Int32 { printError("not yet"); return 1 } }
