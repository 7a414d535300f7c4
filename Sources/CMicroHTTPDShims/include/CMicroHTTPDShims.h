#pragma once
// Fixed-arity wrappers for the variadic libmicrohttpd calls, which Swift cannot call directly
// (MHD_start_daemon, MHD_get_connection_info, MHD_get_daemon_info). Each wraps exactly one call
// with the option list the HTTPServer module needs; no logic lives here.
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/// MHD_start_daemon with the option list HTTPServer uses: bind to `addr` (MHD_OPTION_SOCK_ADDR),
/// optionally SO_REUSEPORT, the thread-pool size (0: the daemon's own single polling thread),
/// explicit connection limits, the idle timeout, strict client parsing, and the request-completed /
/// connection-notify / URI-log callbacks (all sharing `cls`).
/// `port` is ignored by MHD when a socket address is given, but must still be passed.
struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, uint16_t port, const struct sockaddr *addr,
                                     unsigned int reuse_port, size_t memory_limit,
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int per_ip_connection_limit, unsigned int timeout_seconds,
                                     int strict_for_client, MHD_AccessHandlerCallback access_handler,
                                     MHD_RequestCompletedCallback completed,
                                     MHD_NotifyConnectionCallback notify_connection,
                                     void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                     void *cls);

/// MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT): the port actually bound (0 if unknown).
uint16_t cmhd_daemon_bind_port(struct MHD_Daemon *daemon);

/// MHD_get_daemon_info(MHD_DAEMON_INFO_LISTEN_FD): the daemon's listening socket (-1 if none).
/// Still owned by libmicrohttpd: only for setsockopt.
int cmhd_daemon_listen_fd(struct MHD_Daemon *daemon);

/// MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD): the connection's socket (-1 if unknown).
int cmhd_connection_fd(struct MHD_Connection *connection);

/// MHD_get_connection_info(MHD_CONNECTION_INFO_SOCKET_CONTEXT): the pointer stored by the
/// connection-notify callback at MHD_CONNECTION_NOTIFY_STARTED (NULL if none).
void *cmhd_connection_socket_context(struct MHD_Connection *connection);

/// MHD_get_connection_info(MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE): the size of the current
/// request's head, request line and final blank line included (0 before the head is complete).
size_t cmhd_connection_header_size(struct MHD_Connection *connection);
