import MessageFilterCore

/// The classes of scalars the regexes of one file tell apart, found offline so that their DFAs
/// need no Unicode lookups at run time.
///
/// Each program's answers about a scalar (`RegexProgram.verdicts`) can change only at a few
/// scalars: the bounds of its literals and ranges (closed under case when it ignores case),
/// where a property of its escapes changes, at line breaks, and at the scalars that fold to its
/// case-insensitive literals. Between two such points every scalar gets the same answers, so one representative
/// speaks for each interval. `RegexAutomatonTests` checks that claim against every scalar.
package struct RegexAlphabet {
    /// The file's classes.
    package var scalarClasses: ScalarClasses
    /// Per program: its class of each of the file's classes, and a representative scalar of each
    /// of its own classes. Nil for a program with more than 256 classes, which runs on its NFA.
    package var programs: [(classMap: [UInt8], representatives: [UInt32])?]

    package init(_ programs: [RegexProgram]) {
        let tables = UnicodeTables.shared
        var perProgram: [(starts: [UInt32], classes: [UInt16], representatives: [UInt32], asciiClasses: [UInt16])] =
            []
        var allPoints: [UInt32] = [0x80, 0xD800, 0xE000]
        for program in programs {
            let points = tables.points(for: program.dependencies)
            allPoints += points
            // The program's own classes: ASCII one by one, then each interval of its points.
            var ids: [[Bool]: UInt16] = [:]
            var representatives: [UInt32] = []
            var bits: [Bool] = []
            func classOf(_ scalar: UInt32) -> UInt16 {
                program.verdicts(scalar, into: &bits)
                if let id = ids[bits] { return id }
                let id = UInt16(truncatingIfNeeded: ids.count)
                ids[bits] = id
                representatives.append(scalar)
                return id
            }
            let asciiClasses = (0..<UInt32(0x80)).map(classOf)
            var starts: [UInt32] = []
            var classes: [UInt16] = []
            for point in points where point >= 0x80 && point < 0x11_0000 {
                // The surrogates never occur in UTF-8; their interval takes the class before it.
                let id = (0xD800..<0xE000).contains(point) ? classes.last ?? 0 : classOf(point)
                starts.append(point)
                classes.append(id)
            }
            perProgram.append((starts, classes, ids.count <= 256 ? representatives : [], asciiClasses))
        }
        allPoints.sort()
        // Every point of every program; a file class is the tuple of the programs' classes.
        var starts: [UInt32] = []
        var rows: [[UInt16]] = []
        var cursors = [Int](repeating: 0, count: programs.count)
        var previous: UInt32? = nil
        for point in allPoints where point >= 0x80 && point < 0x11_0000 && point != previous {
            previous = point
            var row: [UInt16] = []
            row.reserveCapacity(programs.count)
            for index in programs.indices {
                let own = perProgram[index]
                while cursors[index] + 1 < own.starts.count, own.starts[cursors[index] + 1] <= point {
                    cursors[index] += 1
                }
                row.append(own.classes[cursors[index]])
            }
            if rows.last != row {
                starts.append(point)
                rows.append(row)
            }
        }
        var ids: [[UInt16]: UInt16] = [:]
        var fileClasses: [[UInt16]] = []
        func fileClass(_ row: [UInt16]) -> UInt16 {
            if let id = ids[row] { return id }
            let id = UInt16(fileClasses.count)
            ids[row] = id
            fileClasses.append(row)
            return id
        }
        let ascii = (0..<0x80).map { byte in fileClass(programs.indices.map { perProgram[$0].asciiClasses[byte] }) }
        let classes = rows.map(fileClass)
        scalarClasses = ScalarClasses(ascii: ascii, starts: starts, classes: classes, count: fileClasses.count)
        self.programs = programs.indices.map { index in
            let representatives = perProgram[index].representatives
            guard !representatives.isEmpty else { return nil }
            return (fileClasses.map { UInt8($0[index]) }, representatives)
        }
    }
}

/// What the whole of Unicode says about the predicates, gathered once per process by one pass
/// over every scalar (about 0.2 s): where `\w`, `\d` and `\s` change, and which scalars fold alike.
final class UnicodeTables: Sendable {
    static let shared = UnicodeTables()

    let wordPoints: [UInt32]
    let digitPoints: [UInt32]
    let spacePoints: [UInt32]
    /// For a scalar that folds to another (`RegexProgram.fold`), the folded one: the scalars that
    /// fold to each target.
    let foldSources: [UInt32: [UInt32]]
    /// The scalars that fold alike, a group per target with the target first, in scalar order.
    let caseGroups: [[UInt32]]

    private init() {
        var word: [UInt32] = []
        var digit: [UInt32] = []
        var space: [UInt32] = []
        var wasWord = false
        var wasDigit = false
        var wasSpace = false
        var foldSources: [UInt32: [UInt32]] = [:]
        for upper in UInt32(0x41)...0x5A { foldSources[upper | 0x20] = [upper] }
        for value in UInt32(0x80)..<0x11_0000 {
            guard Unicode.Scalar(value) != nil else { continue }
            let isWord = RegexProgram.isWord(value)
            let isDigit = RegexProgram.isDigit(value)
            let isSpace = RegexProgram.isSpace(value)
            if isWord != wasWord { word.append(value) }
            if isDigit != wasDigit { digit.append(value) }
            if isSpace != wasSpace { space.append(value) }
            (wasWord, wasDigit, wasSpace) = (isWord, isDigit, isSpace)
            let folded = RegexProgram.fold(value)
            if folded != value { foldSources[folded, default: []].append(value) }
        }
        // The surrogates were skipped: a property true just before them changes at 0xE000 instead,
        // which is also a point.
        wordPoints = word + [0xD800, 0xE000]
        digitPoints = digit + [0xD800, 0xE000]
        spacePoints = space + [0xD800, 0xE000]
        self.foldSources = foldSources
        caseGroups = foldSources.keys.sorted().map { [$0] + foldSources[$0]! }
    }

    /// `ranges` and every scalar that folds as one of their scalars does, as sorted, disjoint
    /// ranges: what a class ignoring case holds. `[a-z]` gains `A`–`Z`, `K` (Kelvin), `İ` and `ſ`;
    /// `[\u{2100}-\u{214F}]` gains `k`, since Kelvin is inside.
    func caseClosure(of ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var all = ranges
        for group in caseGroups where group.contains(where: { scalar in ranges.contains { $0.contains(scalar) } }) {
            all += group.map { $0...$0 }
        }
        return RegexProperty.merged(all)
    }

    /// The sorted points where a program with these dependencies may answer differently.
    func points(for dependencies: RegexProgram.Dependencies) -> [UInt32] {
        var points: Set<UInt32> = [0x80, 0xD800, 0xE000]
        points.formUnion(dependencies.points)
        if dependencies.escapes & (RegexClass.word | RegexClass.notWord) != 0 { points.formUnion(wordPoints) }
        if dependencies.escapes & (RegexClass.digit | RegexClass.notDigit) != 0 { points.formUnion(digitPoints) }
        if dependencies.escapes & (RegexClass.space | RegexClass.notSpace) != 0 { points.formUnion(spacePoints) }
        for target in dependencies.foldTargets {
            for source in foldSources[target] ?? [] { points.formUnion([source, source + 1]) }
        }
        return points.filter { $0 >= 0x80 && $0 < 0x11_0000 }.sorted()
    }
}
