/// Sorts `keys` ascending in place and allocates nothing, where the standard library's sort
/// takes a scratch buffer as large as the keys (512 KiB for a full sort buffer, at every spill).
///
/// Introsort: quicksort around the median of three, insertion sort below 16 keys, and heapsort
/// once the quicksort is 2·log₂(n) levels deep, so that no input takes more than O(n log n).
package func sortInPlace(_ keys: UnsafeMutableBufferPointer<UInt64>) {
    guard keys.count > 1 else { return }
    let depthLimit = 2 * (Int.bitWidth - keys.count.leadingZeroBitCount)
    introsort(keys, 0, keys.count, depthLimit)
}

/// Sorts `keys[low..<high]`.
private func introsort(_ keys: UnsafeMutableBufferPointer<UInt64>, _ low: Int, _ high: Int, _ depthLimit: Int) {
    var low = low
    var high = high
    var depthLimit = depthLimit
    while high - low > 16 {
        if depthLimit == 0 {
            heapsort(UnsafeMutableBufferPointer(rebasing: keys[low..<high]))
            return
        }
        depthLimit -= 1
        // The median of the first, middle and last keys, left in the middle: Hoare's partition
        // around the value at the lower middle index always leaves both sides non-empty.
        let middle = low + (high - 1 - low) / 2
        if keys[middle] < keys[low] { keys.swapAt(middle, low) }
        if keys[high - 1] < keys[middle] {
            keys.swapAt(high - 1, middle)
            if keys[middle] < keys[low] { keys.swapAt(middle, low) }
        }
        let pivot = keys[middle]
        var left = low - 1
        var right = high
        while true {
            repeat { left += 1 } while keys[left] < pivot
            repeat { right -= 1 } while keys[right] > pivot
            if left >= right { break }
            keys.swapAt(left, right)
        }
        // keys[low...right] ≤ pivot ≤ keys[right + 1..<high]; the smaller side recurses, so the
        // stack holds at most log₂(n) frames.
        if right + 1 - low < high - right - 1 {
            introsort(keys, low, right + 1, depthLimit)
            low = right + 1
        } else {
            introsort(keys, right + 1, high, depthLimit)
            high = right + 1
        }
    }
    // Insertion sort of what is left.
    var index = low + 1
    while index < high {
        let key = keys[index]
        var hole = index
        while hole > low, keys[hole - 1] > key {
            keys[hole] = keys[hole - 1]
            hole -= 1
        }
        keys[hole] = key
        index += 1
    }
}

/// Sorts `keys` by heapsort.
private func heapsort(_ keys: UnsafeMutableBufferPointer<UInt64>) {
    let count = keys.count
    func siftDown(_ start: Int, _ end: Int) {
        var root = start
        while 2 * root + 1 < end {
            var child = 2 * root + 1
            if child + 1 < end, keys[child] < keys[child + 1] { child += 1 }
            guard keys[root] < keys[child] else { return }
            keys.swapAt(root, child)
            root = child
        }
    }
    var start = count / 2
    while start > 0 {
        start -= 1
        siftDown(start, count)
    }
    var end = count
    while end > 1 {
        end -= 1
        keys.swapAt(0, end)
        siftDown(0, end)
    }
}
