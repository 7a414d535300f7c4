#include "CMicroHTTPDShims.h"

struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, uint16_t port, const struct sockaddr *addr,
                                     unsigned int reuse_port, size_t memory_limit,
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int per_ip_connection_limit, unsigned int timeout_seconds,
                                     int strict_for_client, MHD_AccessHandlerCallback access_handler,
                                     MHD_RequestCompletedCallback completed,
                                     MHD_NotifyConnectionCallback notify_connection,
                                     void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                     void *cls) {
    return MHD_start_daemon(flags, port, NULL, NULL, access_handler, cls, MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_LISTENING_ADDRESS_REUSE, reuse_port, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            memory_limit, MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size, MHD_OPTION_CONNECTION_LIMIT,
                            connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds, MHD_OPTION_STRICT_FOR_CLIENT,
                            strict_for_client, MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, cls, MHD_OPTION_URI_LOG_CALLBACK,
                            uri_log, cls, MHD_OPTION_END);
}

uint16_t cmhd_daemon_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int cmhd_daemon_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info == NULL ? -1 : info->listen_fd;
}

int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void *cmhd_connection_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

size_t cmhd_connection_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}
