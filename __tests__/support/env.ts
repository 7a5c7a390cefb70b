// The SDK warns once per process that Node 20 support ends in 2027: noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'
