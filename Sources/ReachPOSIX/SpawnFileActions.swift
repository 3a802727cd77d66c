import CGNU

#if canImport(Glibc)
import Glibc
#endif

extension posix_spawn_file_actions_t {
    /// Has the child close every descriptor from `first` on, after the actions added before.
    ///
    /// A descriptor made without close-on-exec (Foundation's pipes and sockets, or one another
    /// thread is making at that moment) otherwise lives on in the child and in all it starts: a
    /// pipe then never reaches its end while they run.
    package mutating func closeEveryDescriptor(from first: Int32) {
        _ = spawn_file_actions_add_close_from(&self, first)
    }

    /// Has the child change to `directory` before it runs the program.
    package mutating func changeDirectory(to directory: String) {
        _ = spawn_file_actions_add_chdir(&self, directory)
    }
}
