import Foundation
import ThumbnailService

// Before anything starts a thread, so that every thread inherits the block (see the method).
ThumbnailApp.blockTerminationSignals()
// thumbd: read the settings (flags over THUMBD_* environment), build, serve until SIGTERM/SIGINT.
switch ServiceConfiguration.load(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
{
case .success(.help(let text)):
    print(text)
case .success(.version):
    print("thumbd \(ThumbnailApp.version)")
case .success(.sign(let signed)):
    print(signed)
case .success(.run(let configuration)):
    MallocTrim.start(every: configuration.processing.mallocTrimInterval)
    let app: ThumbnailApp
    do {
        app = try ThumbnailApp(configuration: configuration)
    } catch {
        FileHandle.standardError.write(Data("thumbd: \(error)\n".utf8))
        exit(2)
    }
    do {
        try app.start()
    } catch {
        let metrics = configuration.server.metricsListen.map { " or \($0)" } ?? ""
        let message =
            "thumbd: cannot listen on \(configuration.server.host):\(configuration.server.port)\(metrics): \(error)\n"
        FileHandle.standardError.write(Data(message.utf8))
        exit(1)
    }
    exit(app.runUntilSignalled())
case .failure(let error):
    FileHandle.standardError.write(Data("thumbd: \(error)\nSee thumbd --help.\n".utf8))
    exit(2)
}
