// GNU libmicrohttpd (Debian 12: 0.9.75, libmicrohttpd-dev), for the QuireHTTP wrapper.
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <microhttpd.h>

// Swift cannot call C variadic functions. These shims give the few calls QuireHTTP makes a fixed
// signature; everything else MHD_start_daemon takes travels in the MHD_OPTION_ARRAY.

/// MHD_start_daemon with the logger and the completion notifier (two-pointer options) spelled out,
/// the rest of the options in `options` (terminated by MHD_OPTION_END).
static inline struct MHD_Daemon *quire_mhd_start(unsigned int flags, uint16_t port,
                                                 MHD_AccessHandlerCallback handler,
                                                 MHD_RequestCompletedCallback completed,
                                                 MHD_NotifyConnectionCallback connection,
                                                 MHD_LogCallback log, void *context,
                                                 const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_EXTERNAL_LOGGER, log, context,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_NOTIFY_CONNECTION, connection, context,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/// The port the daemon listens on (the real one when it was started on port 0), 0 if unknown.
static inline uint16_t quire_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The connection's socket, -1 if unknown.
static inline int quire_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// The client's address, NULL if unknown.
static inline const struct sockaddr *quire_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// What the kernel counted on a TCP socket: segments with data in and out. `known` is 0 when the
/// kernel is too old to say (before Linux 4.6).
struct quire_tcp_traffic { int known; uint32_t data_segments_in; uint32_t data_segments_out; };

static inline struct quire_tcp_traffic quire_tcp_traffic(int fd) {
    // glibc's `struct tcp_info` stops before these fields and <linux/tcp.h> clashes with it in a module
    // map, so read the kernel's struct as bytes. Its layout is kernel ABI and only ever grows:
    // tcpi_data_segs_in at offset 152, tcpi_data_segs_out at 156 (uapi linux/tcp.h since 4.6).
    struct quire_tcp_traffic traffic = {0, 0, 0};
    unsigned char info[256];
    socklen_t length = sizeof(info);
    memset(info, 0, sizeof(info));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &length) == 0 && length >= 160) {
        traffic.known = 1;
        memcpy(&traffic.data_segments_in, info + 152, sizeof(uint32_t));
        memcpy(&traffic.data_segments_out, info + 156, sizeof(uint32_t));
    }
    return traffic;
}
