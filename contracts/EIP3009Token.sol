// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title EIP3009Token
/// @notice Test-only 6-decimal ERC-20 with EIP-3009 authorizations that behaves like Circle's FiatTokenV2_2
///         (USDC/EURC) wherever an x402 facilitator or our router can tell: same functions, typehashes, EIP-712
///         domain, events and revert strings. Not for production: no pausing, blacklist, roles or upgrades.
/// @dev The test helper deploys it once, then copies its runtime code to the real token addresses with
///      `anvil_setCode`. Code copied that way brings no storage, so everything the constructor sets is an
///      immutable (immutables are part of the runtime code) and storage holds only what calls write later:
///      balances, allowances, total supply, authorization states.
contract EIP3009Token {
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;

    // FiatTokenV2_2's EIP-3009 typehashes (EIP-3009 §"Specification").
    // keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267;
    // keccak256("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8;
    // keccak256("CancelAuthorization(address authorizer,bytes32 nonce)")
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429;

    // Upper bound of s in the lower half order (EIP-2; FiatToken's ECRecover rejects malleable signatures).
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    // Strings as immutables: left-aligned bytes in a word plus the length (cf. OpenZeppelin ShortStrings).
    bytes32 private immutable _name;
    uint256 private immutable _nameLength;
    bytes32 private immutable _symbol;
    uint256 private immutable _symbolLength;
    bytes32 private immutable _version;
    uint256 private immutable _versionLength;

    /// @notice The only account allowed to mint.
    address public immutable minter;

    uint256 public totalSupply;
    mapping(address => uint256) private _balances;
    mapping(address => mapping(address => uint256)) private _allowances;
    // authorizer => nonce => used or canceled (EIP-3009 nonces are random, not sequential).
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor(string memory name_, string memory symbol_, string memory version_, address minter_) {
        (_name, _nameLength) = _toWord(name_);
        (_symbol, _symbolLength) = _toWord(symbol_);
        (_version, _versionLength) = _toWord(version_);
        minter = minter_;
    }

    // ---------------------------------------------------------------------------------------------------------
    // ERC-20 (FiatToken's checks and messages)

    function name() external view returns (string memory) {
        return _toString(_name, _nameLength);
    }

    function symbol() external view returns (string memory) {
        return _toString(_symbol, _symbolLength);
    }

    /// @notice The EIP-712 domain version ("2" for USDC and EURC), as FiatTokenV2_2's `version()`.
    function version() external view returns (string memory) {
        return _toString(_version, _versionLength);
    }

    function decimals() external pure returns (uint8) {
        return 6;
    }

    function balanceOf(address account) external view returns (uint256) {
        return _balances[account];
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return _allowances[owner][spender];
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    /// @dev Like FiatToken, an allowance of type(uint256).max is spent too (no "infinite approval").
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = _allowances[from][msg.sender];
        require(value <= allowed, "ERC20: transfer amount exceeds allowance");
        _transfer(from, to, value);
        _allowances[from][msg.sender] = allowed - value;
        return true;
    }

    function mint(address to, uint256 amount) external returns (bool) {
        require(msg.sender == minter, "FiatToken: caller is not a minter");
        require(to != address(0), "FiatToken: mint to the zero address");
        require(amount > 0, "FiatToken: mint amount not greater than 0");
        totalSupply += amount;
        _balances[to] += amount;
        emit Transfer(address(0), to, amount);
        return true;
    }

    // ---------------------------------------------------------------------------------------------------------
    // EIP-712

    /// @notice Computed on every call, as FiatTokenV2_2 does: it follows block.chainid and address(this), so the
    ///         code copied to another address signs for that address.
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparator();
    }

    // ---------------------------------------------------------------------------------------------------------
    // EIP-3009 (FiatTokenV2_2: both the v,r,s and the `bytes signature` overloads of each function)

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature);
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature);
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Internals

    function _transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        // FiatTokenV2_2's order: time window and nonce, then signature, then the transfer's own checks.
        _requireValidAuthorization(from, nonce, validAfter, validBefore);
        _requireValidSignature(
            from,
            keccak256(
                abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
            ),
            signature
        );
        _markAuthorizationAsUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        // Only the payee may submit: nobody can front-run the payee's own call with the same authorization.
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _requireValidAuthorization(from, nonce, validAfter, validBefore);
        _requireValidSignature(
            from,
            keccak256(
                abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
            ),
            signature
        );
        _markAuthorizationAsUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        _requireValidSignature(
            authorizer, keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce)), signature
        );
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireValidAuthorization(address authorizer, bytes32 nonce, uint256 validAfter, uint256 validBefore)
        private
        view
    {
        // Both bounds exclusive, as in FiatTokenV2_2.
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    function _markAuthorizationAsUsed(address authorizer, bytes32 nonce) private {
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationUsed(authorizer, nonce);
    }

    /// @dev FiatTokenV2_2's SignatureChecker for an EOA signer: a malformed signature reverts with ECRecover's
    ///      message, a well-formed one from someone else with "FiatTokenV2: invalid signature". (FiatToken also
    ///      accepts ERC-1271 signatures from contract signers; this test token does not.)
    function _requireValidSignature(address signer, bytes32 structHash, bytes memory signature) private view {
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", _domainSeparator(), structHash));
        require(_recover(digest, signature) == signer, "FiatTokenV2: invalid signature");
    }

    /// @dev FiatToken's ECRecover.recover: 65 bytes r || s || v, s in the lower half order, v in {27, 28}, and a
    ///      recovered address other than zero.
    function _recover(bytes32 digest, bytes memory signature) private pure returns (address) {
        require(signature.length == 65, "ECRecover: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        require(uint256(s) <= HALF_ORDER, "ECRecover: invalid signature 's' value");
        require(v == 27 || v == 28, "ECRecover: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECRecover: invalid signature");
        return signer;
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(
                EIP712_DOMAIN_TYPEHASH,
                keccak256(bytes(_toString(_name, _nameLength))),
                keccak256(bytes(_toString(_version, _versionLength))),
                block.chainid,
                address(this)
            )
        );
    }

    function _transfer(address from, address to, uint256 value) private {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        require(value <= _balances[from], "ERC20: transfer amount exceeds balance");
        _balances[from] -= value;
        _balances[to] += value;
        emit Transfer(from, to, value);
    }

    function _approve(address owner, address spender, uint256 value) private {
        require(owner != address(0), "ERC20: approve from the zero address");
        require(spender != address(0), "ERC20: approve to the zero address");
        _allowances[owner][spender] = value;
        emit Approval(owner, spender, value);
    }

    /// @dev A string of at most 32 bytes as (left-aligned word, length); bytes32(b) pads with zeros on the right.
    function _toWord(string memory str) private pure returns (bytes32 word, uint256 length) {
        bytes memory b = bytes(str);
        require(b.length <= 32, "EIP3009Token: string longer than 32 bytes");
        return (bytes32(b), b.length);
    }

    function _toString(bytes32 word, uint256 length) private pure returns (string memory) {
        bytes memory out = new bytes(length);
        for (uint256 i = 0; i < length; ++i) {
            out[i] = word[i];
        }
        return string(out);
    }
}
