// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Multicall3 (aggregate3 only)
/// @notice Test stand-in for Multicall3 (github.com/mds1/multicall, MIT), which Base, Base Sepolia and most EVM
///         chains have at 0xcA11bde05977b3631167028862bE2a173976CA11. payroute sends a plan order's transfers to
///         several receivers through its `aggregate3` with `allowFailure = false`, so they are paid in one
///         transaction or not at all; the test helper copies this code to that address on anvil. Same ABI and the
///         same behaviour for that call: each call in order, and a failing call that may not fail reverts the whole.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata call = calls[i];
            (bool success, bytes memory ret) = call.target.call(call.callData);
            if (!success && !call.allowFailure) {
                // The canonical contract reverts with this message (Error(string)), not the callee's reason.
                revert("Multicall3: call failed");
            }
            returnData[i] = Result(success, ret);
        }
    }
}
