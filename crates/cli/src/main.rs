//! `cowork`, the command line (its code is the library: the packaged window program runs it too).

fn main() -> std::process::ExitCode {
    cowork_cli::main()
}
