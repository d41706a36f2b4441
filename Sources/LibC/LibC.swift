// The C library, with each platform's spelling: the one place the package names it. Modules
// import it `internal import LibC` (or `package import` where a package declaration names a C
// type), never re-exported, so that a module that imports BlocklistCore does not inherit the C
// library through it.
#if canImport(Glibc)
    @_exported import Glibc
#elseif canImport(Musl)
    @_exported import Musl
#elseif canImport(Darwin)
    @_exported import Darwin
#endif
