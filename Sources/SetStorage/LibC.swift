// The C library, for every file of this module (and its importers): the one place this module
// names it, with each platform's spelling.
#if canImport(Glibc)
    @_exported import Glibc
#elseif canImport(Musl)
    @_exported import Musl
#elseif canImport(Darwin)
    @_exported import Darwin
#endif
