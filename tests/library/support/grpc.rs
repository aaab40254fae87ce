//! An OTLP/gRPC receiver (tonic) for one signal, defined by [`grpc_receiver!`].

/// Defines `$receiver`, a tonic `$service` (served by `$server`) that sends each export request
/// to a channel, and `async fn $start() -> (SocketAddr, UnboundedReceiver<$request>)`, which
/// serves it on a free loopback port.
#[allow(unused_macros)]
macro_rules! grpc_receiver {
    ($vis:vis $start:ident, $receiver:ident: $service:path, $server:ident, $request:ty => $response:ty) => {
        struct $receiver(tokio::sync::mpsc::UnboundedSender<$request>);

        #[tonic::async_trait]
        impl $service for $receiver {
            async fn export(
                &self,
                request: tonic::Request<$request>,
            ) -> Result<tonic::Response<$response>, tonic::Status> {
                let _ = self.0.send(request.into_inner());
                Ok(tonic::Response::new(<$response>::default()))
            }
        }

        $vis async fn $start() -> (
            std::net::SocketAddr,
            tokio::sync::mpsc::UnboundedReceiver<$request>,
        ) {
            let (addr, incoming) = mcp_readiness_fixtures::otlp::loopback_incoming().await;
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let server = tonic::transport::Server::builder().add_service($server::new($receiver(tx)));
            tokio::spawn(server.serve_with_incoming(incoming));
            (addr, rx)
        }
    };
}

#[allow(unused_imports)]
pub(crate) use grpc_receiver;
